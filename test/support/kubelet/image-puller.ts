// image-puller.ts — pulls an image by reference from a loopback registry (crane, built by
// hack/crane.sh) and unpacks its layers into a root filesystem, cached by the image's digest.
//
// Only loopback registries: tests send traffic to loopback and nowhere else, so an upstream image
// (registry.k8s.io, docker.io) is never pulled; the image table stands in for the few this
// cluster needs (image-table.ts).
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** ImageConfig is what of an OCI image config the kubelet runs a container with. */
export interface ImageConfig {
  readonly entrypoint: readonly string[];
  readonly cmd: readonly string[];
  /** env in the image's order, as [name, value] */
  readonly env: readonly (readonly [string, string])[];
  /** user as the image says it: `uid`, `uid:gid`, `name`, `name:group` or empty (root) */
  readonly user: string;
  readonly workingDir: string;
}

/** PulledImage is an image unpacked on this machine. */
export interface PulledImage {
  /** reference is the image as the pod names it */
  readonly reference: string;
  /** digest is the manifest digest the reference resolved to (sha256:…) */
  readonly digest: string;
  /** rootfs is the unpacked, flattened filesystem (read-only lower layer of every container) */
  readonly rootfs: string;
  readonly config: ImageConfig;
}

/** ImagePullError is an image this kubelet cannot pull; its message goes to the container's status. */
export class ImagePullError extends Error {
  readonly code = 'TUNA_KUBELET_IMAGE_PULL';
}

/** registryHost returns the registry part of a reference, or undefined for a Docker Hub name. */
export function registryHost(image: string): string | undefined {
  const slash = image.indexOf('/');
  if (slash < 0) return undefined;
  const first = image.slice(0, slash);
  return first.includes('.') || first.includes(':') || first === 'localhost' ? first : undefined;
}

/** isLoopbackRegistry says whether an image lives on a registry on this machine's loopback. */
export function isLoopbackRegistry(image: string): boolean {
  const host = registryHost(image);
  if (host === undefined) return false;
  const name = host.startsWith('[') ? host.slice(1, host.indexOf(']')) : (host.split(':')[0] ?? '');
  return name === 'localhost' || name === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name);
}

/** parseImageConfig reads an OCI image config (the JSON `crane config` prints). */
export function parseImageConfig(json: string): ImageConfig {
  const doc = JSON.parse(json) as { config?: { Entrypoint?: string[] | null; Cmd?: string[] | null; Env?: string[] | null; User?: string; WorkingDir?: string } };
  const config = doc.config ?? {};
  const env = (config.Env ?? []).map((line): [string, string] => {
    const eq = line.indexOf('=');
    return eq < 0 ? [line, ''] : [line.slice(0, eq), line.slice(eq + 1)];
  });
  return { entrypoint: config.Entrypoint ?? [], cmd: config.Cmd ?? [], env, user: config.User ?? '', workingDir: config.WorkingDir ?? '' };
}

/** referenceAtDigest pins a reference to a digest: `reg/repo:tag` → `reg/repo@sha256:…`. */
export function referenceAtDigest(image: string, digest: string): string {
  const noDigest = image.split('@')[0] ?? image;
  const slash = noDigest.lastIndexOf('/');
  const colon = noDigest.lastIndexOf(':');
  return `${colon > slash ? noDigest.slice(0, colon) : noDigest}@${digest}`;
}

const PLATFORM = 'linux/amd64';
const PULL_TIMEOUT_MS = 180_000;

/** ImagePuller resolves references with crane and keeps one unpacked root filesystem per digest. */
export class ImagePuller {
  private readonly unpacking = new Map<string, Promise<PulledImage>>();

  /** crane is the crane binary; cacheDir holds `<digest>/rootfs` and `<digest>/config.json`. */
  constructor(
    private readonly crane: string,
    private readonly cacheDir: string,
  ) {}

  /** pull resolves the reference to a digest (every time: a tag may move) and unpacks it once. */
  async pull(image: string): Promise<PulledImage> {
    if (!isLoopbackRegistry(image)) throw new ImagePullError(`image "${image}" is not on a loopback registry`);
    const digest = (await this.run(['digest', '--platform', PLATFORM, image]).catch((error: Error) => {
      throw new ImagePullError(`pulling image "${image}": ${error.message}`);
    })).trim();
    if (!/^sha256:[0-9a-f]{64}$/.test(digest)) throw new ImagePullError(`pulling image "${image}": crane digest printed ${JSON.stringify(digest)}`);
    let pending = this.unpacking.get(digest);
    if (!pending) {
      pending = this.unpack(image, digest);
      this.unpacking.set(digest, pending);
      pending.catch(() => this.unpacking.delete(digest));
    }
    return { ...(await pending), reference: image };
  }

  private async unpack(image: string, digest: string): Promise<PulledImage> {
    const dir = path.join(this.cacheDir, digest.replace(':', '-'));
    const rootfs = path.join(dir, 'rootfs');
    const configFile = path.join(dir, 'config.json');
    const pinned = referenceAtDigest(image, digest);
    if (!existsSync(configFile)) {
      const staging = `${dir}.tmp`;
      await rm(staging, { recursive: true, force: true });
      await mkdir(path.join(staging, 'rootfs'), { recursive: true });
      try {
        const config = await this.run(['config', '--platform', PLATFORM, pinned]);
        // crane export flattens the layers (whiteouts applied); tar keeps numeric owners and modes.
        await run('bash', ['-c', 'set -euo pipefail; "$0" export --platform "$1" "$2" - | tar -x -p --numeric-owner -C "$3"', this.crane, PLATFORM, pinned, path.join(staging, 'rootfs')]);
        await writeFile(path.join(staging, 'config.json'), config);
        await rm(dir, { recursive: true, force: true });
        await rename(staging, dir);
      } catch (error) {
        await rm(staging, { recursive: true, force: true });
        throw new ImagePullError(`unpacking image "${image}" (${digest}): ${(error as Error).message}`);
      }
    }
    return { reference: image, digest, rootfs, config: parseImageConfig(await readFile(configFile, 'utf8')) };
  }

  private run(args: readonly string[]): Promise<string> {
    return run(this.crane, args);
  }
}

/** run runs a program with a bounded time and resolves with its stdout (stderr in the error). */
function run(file: string, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { timeout: PULL_TIMEOUT_MS, maxBuffer: 16 << 20, encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error) reject(new Error((stderr || error.message).trim().split('\n').slice(-3).join('; ')));
      else resolve(stdout);
    });
  });
}
