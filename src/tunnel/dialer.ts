import { createHash } from 'node:crypto';
import { connect as connectTcp, isIP } from 'node:net';
import type { Socket } from 'node:net';
import { connect as connectTls, createSecureContext } from 'node:tls';
import type { SecureContext, TLSSocket } from 'node:tls';
import { EdgeUnreachableError } from './errors.js';

/** EdgeEndpoint is one edge tunnel endpoint the agent dials. */
export interface EdgeEndpoint {
  host: string;
  port: number;
  /** false only for loopback tests and demos; production tunnels are always TLS */
  tls: boolean;
  /** SNI and certificate name; defaults to host */
  servername?: string;
  /** extra trust anchors (PEM), e.g. the edge's self-signed CA in tests */
  ca?: string | string[];
}

/** edgeEndpointKey returns a stable string naming an endpoint, for equality and logs. */
export function edgeEndpointKey(edge: EdgeEndpoint): string {
  const scheme = edge.tls ? 'tls' : 'tcp';
  const name = edge.servername !== undefined && edge.servername !== edge.host ? `#${edge.servername}` : '';
  const ca =
    edge.ca === undefined ? '' : `+ca:${createHash('sha256').update([edge.ca].flat().join('\n')).digest('hex').slice(0, 16)}`;
  return `${scheme}://${edge.host}:${edge.port}${name}${ca}`;
}

/** EdgeDialer opens the byte stream a tunnel runs on; injected so tests and other transports can replace it. */
export interface EdgeDialer {
  /** dial connects to the edge; it rejects with EdgeUnreachableError, or AbortError when signal fires. */
  dial(edge: EdgeEndpoint, signal: AbortSignal): Promise<Socket>;
}

/** NetEdgeDialerOptions tunes NetEdgeDialer. */
export interface NetEdgeDialerOptions {
  /** connect + TLS handshake budget in ms (default 10 s) */
  connectTimeoutMs?: number;
}

/** NetEdgeDialer dials TCP or TLS with Node's net/tls. */
export class NetEdgeDialer implements EdgeDialer {
  readonly #timeoutMs: number;

  constructor(options: NetEdgeDialerOptions = {}) {
    this.#timeoutMs = options.connectTimeoutMs ?? 10_000;
  }

  /**
   * One SecureContext per set of trust anchors, shared by every connection that trusts them.
   * `tls.connect({ca})` would build a new OpenSSL context and certificate store per connection,
   * which an agent holding many tunnels pays for each one: about 21 KiB per idle tunnel on the agent
   * (docs/tunnel-performance.md, memory attempt 1).
   */
  readonly #contexts = new Map<string, SecureContext>();

  #contextFor(edge: EdgeEndpoint): SecureContext {
    const key = edge.ca === undefined ? '' : [edge.ca].flat().join('\n');
    let context = this.#contexts.get(key);
    if (context === undefined) {
      context = createSecureContext(edge.ca === undefined ? {} : { ca: edge.ca });
      this.#contexts.set(key, context);
    }
    return context;
  }

  /** secureContextCount is how many TLS contexts the dialer holds (one per distinct `ca`): for tests. */
  get secureContextCount(): number {
    return this.#contexts.size;
  }

  dial(edge: EdgeEndpoint, signal: AbortSignal): Promise<Socket> {
    return new Promise<Socket>((resolve, reject) => {
      const where = `${edge.host}:${edge.port}`;
      const socket: Socket | TLSSocket = edge.tls
        ? connectTls({
            host: edge.host,
            port: edge.port,
            // RFC 6066 §3: SNI carries a DNS name, never an IP literal.
            ...(edge.servername !== undefined || isIP(edge.host) === 0 ? { servername: edge.servername ?? edge.host } : {}),
            // the upgrade is HTTP/1.1; HTTP/2 starts only after 101 (docs/protocol.md §2).
            ALPNProtocols: ['http/1.1'],
            secureContext: this.#contextFor(edge),
          })
        : connectTcp({ host: edge.host, port: edge.port });
      const readyEvent = edge.tls ? 'secureConnect' : 'connect';
      const fail = (err: unknown): void => {
        cleanup();
        socket.destroy();
        reject(signal.aborted ? signal.reason : new EdgeUnreachableError(where, err));
      };
      const onTimeout = (): void => fail(new Error(`connect timed out after ${this.#timeoutMs} ms`));
      const onAbort = (): void => fail(signal.reason);
      const onReady = (): void => {
        cleanup();
        socket.setNoDelay(true);
        resolve(socket);
      };
      const cleanup = (): void => {
        socket.setTimeout(0);
        socket.off('timeout', onTimeout);
        socket.off('error', fail);
        socket.off(readyEvent, onReady);
        signal.removeEventListener('abort', onAbort);
      };
      if (signal.aborted) return fail(signal.reason);
      socket.setTimeout(this.#timeoutMs);
      socket.once('timeout', onTimeout);
      socket.once('error', fail);
      socket.once(readyEvent, onReady);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}
