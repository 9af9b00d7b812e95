import type { Socket } from 'node:net';
import type { PublicFront } from './fronts/public-front.js';
import type { EdgeBinding } from './tunnels/directory.js';

/**
 * The listeners bindings ask for: one per tcp-port binding and one per (address, port) of an
 * address binding. EdgeServer opens each on its own (issue 12 finding 1): one that cannot bind is
 * logged, counted and retried, and neither the others nor the edge wait on it.
 */

/** WantedListener is one listener a binding needs: where, and how its sockets are served. */
export interface WantedListener {
  readonly binding: EdgeBinding;
  readonly host: string;
  readonly port: number;
  readonly accept: (socket: Socket) => void;
}

/** DEFAULT_BINDING_RETRY_MS is how long a listener that failed to bind waits before the next try. */
export const DEFAULT_BINDING_RETRY_MS = 30_000;

/** wantedBindingListeners maps each listener the bindings need by a key naming binding, protocol and address. */
export function wantedBindingListeners(bindings: readonly EdgeBinding[], tcpHost: string, front: PublicFront): Map<string, WantedListener> {
  const wanted = new Map<string, WantedListener>();
  for (const binding of bindings) {
    if (binding.kind === 'tcp-port' && binding.port !== undefined) {
      wanted.set(`${binding.id}|tcp|${binding.port}`, {
        binding,
        host: tcpHost,
        port: binding.port,
        accept: (s) => void front.acceptTcp(s, binding).catch(() => s.destroy()),
      });
    }
    if (binding.kind === 'address' && binding.address !== undefined) {
      for (const p of binding.ports ?? []) {
        const accept =
          p.protocol === 'tcp'
            ? (s: Socket) => void front.acceptTcp(s, binding).catch(() => s.destroy())
            : p.protocol === 'tls'
              ? (s: Socket) => void front.acceptTls(s, binding).catch(() => s.destroy())
              : p.protocol === 'https'
                ? (s: Socket) => void front.acceptHttps(s, binding).catch(() => s.destroy())
                : (s: Socket) => front.acceptHttp(s, binding);
        wanted.set(`${binding.id}|${p.protocol}|${binding.address}:${p.port}`, { binding, host: binding.address, port: p.port, accept });
      }
    }
  }
  return wanted;
}
