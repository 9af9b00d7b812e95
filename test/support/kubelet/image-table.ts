// image-table.ts — maps an upstream container image this machine cannot pull (tests reach only
// loopback) to a program on this machine; images on a loopback registry are pulled and run instead
// (image-puller.ts, container-rootfs.ts).
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { PulledImage } from './image-puller.js';

/**
 * ImageProgram says how to run an image: a mapped program, the container's own command from the
 * host, or a pulled image's root filesystem and entrypoint.
 * `standIn`, when set, says the program is ours and not the image's software (the kubelet logs it).
 */
export type ImageProgram =
  | { readonly kind: 'binary'; readonly path: string; readonly name: string; readonly prefixArgs?: readonly string[]; readonly standIn?: string }
  | { readonly kind: 'host-command' }
  | { readonly kind: 'image'; readonly image: PulledImage };

/** dnsStandIn is the coredns image's program: our TypeScript DNS server, run by this Node with tsx. */
function dnsStandIn(): ImageProgram {
  const script = fileURLToPath(new URL('./dns-stand-in.ts', import.meta.url));
  return {
    kind: 'binary',
    path: process.execPath,
    name: 'coredns',
    prefixArgs: ['--import', pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href, script],
    standIn: "tuna's DNS stand-in (test/support/kubelet/dns-stand-in.ts), not coredns: whoami zones only, forward zones REFUSED",
  };
}

/** ImageTableOptions are the directories of the Go-built programs images map to. */
export interface ImageTableOptions {
  /** echoBin is the directory holding `echo-basic` (hack/cluster/build.sh). */
  readonly echoBin: string;
}

/** imageRepository strips the tag and digest: `a/b:1@sha256:…` → `a/b`. */
export function imageRepository(image: string): string {
  const noDigest = image.split('@')[0] ?? image;
  const slash = noDigest.lastIndexOf('/');
  const colon = noDigest.lastIndexOf(':');
  return colon > slash ? noDigest.slice(0, colon) : noDigest;
}

/**
 * resolveImage returns the program an image runs, or undefined when this kubelet cannot "pull" it
 * (the pod then waits with reason ErrImagePull, as a real kubelet's pod does).
 * - the Gateway API conformance echo server (any tag) → the echo-basic we built;
 * - coredns (any tag) → our DNS stand-in, which says at start what of the Corefile it serves;
 * - `tuna.test/host` (any tag) → the container's command, run from the host (for tests that need a
 *   shell or a tool in a pod).
 */
export function resolveImage(image: string, options: ImageTableOptions): ImageProgram | undefined {
  switch (imageRepository(image)) {
    case 'gcr.io/k8s-staging-gateway-api/echo-basic':
    case 'registry.k8s.io/gateway-api/echo-basic':
      return { kind: 'binary', path: path.join(options.echoBin, 'echo-basic'), name: 'echo-basic' };
    case 'registry.k8s.io/coredns/coredns':
    case 'docker.io/coredns/coredns':
    case 'coredns/coredns':
      return dnsStandIn();
    case 'tuna.test/host':
      return { kind: 'host-command' };
    default:
      return undefined;
  }
}
