import { createHash } from 'node:crypto';
import type https from 'node:https';
import { KubeConfig } from '@kubernetes/client-node';

/** what RequestContext offers for the connection pool of one API call (client-node's RequestContext) */
type DispatcherContext = Parameters<KubeConfig['applySecurityAuthentication']>[0];
type Dispatcher = NonNullable<ReturnType<DispatcherContext['getDispatcher']>>;

/** how many distinct TLS identities keep a pool (a rotated client certificate makes a new one) */
const MAX_POOLS = 4;

/**
 * PooledKubeConfig is a KubeConfig whose API calls share their connections. client-node 2.0
 * gives every call a new connection pool (`applySecurityAuthentication` builds a new undici Agent
 * each time), so every call of the operator paid a TCP connect, a new TLS context and a TLS
 * handshake with the apiserver: in the scale benchmark (`npm run bench -- scale`) that was about a third of the
 * operator's CPU while a batch of Ingresses was served. Here the first pool made for a TLS
 * identity (server, CA, client certificate and key, verification) is kept and given to every
 * later call with the same identity; a new identity (a rotated certificate) gets its own, and the
 * oldest of more than four is closed once its calls end.
 */
export class PooledKubeConfig extends KubeConfig {
  readonly #pools = new Map<string, Dispatcher>();

  override async applySecurityAuthentication(context: DispatcherContext): Promise<void> {
    await super.applySecurityAuthentication(context);
    const made = context.getDispatcher();
    if (made === undefined) return; // plain HTTP without TLS options: fetch's global pool already keeps connections
    const key = await this.#identity();
    const pooled = this.#pools.get(key);
    if (pooled !== undefined) {
      context.setDispatcher(pooled);
      void made.close().catch(() => undefined); // never used: no connection to end
      return;
    }
    this.#pools.set(key, made);
    if (this.#pools.size > MAX_POOLS) {
      const [oldestKey, oldest] = this.#pools.entries().next().value as [string, Dispatcher];
      this.#pools.delete(oldestKey);
      void oldest.close().catch(() => undefined);
    }
  }

  /** identity hashes what decides a connection's TLS: the server and the options the kubeconfig gives (no secret leaves the hash). */
  async #identity(): Promise<string> {
    const opts: https.RequestOptions = {};
    await this.applyToHTTPSOptions(opts);
    const hash = createHash('sha256');
    const cluster = this.getCurrentCluster();
    for (const part of [cluster?.server, cluster?.proxyUrl, opts.ca, opts.cert, opts.key, opts.pfx, opts.passphrase, String(opts.rejectUnauthorized), opts.servername]) {
      const value = part === undefined ? '' : Buffer.isBuffer(part) || typeof part === 'string' ? part : JSON.stringify(part);
      hash.update(value).update('\u0000');
    }
    return hash.digest('hex');
  }
}
