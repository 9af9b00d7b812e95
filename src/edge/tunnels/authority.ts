import { createHash, timingSafeEqual } from 'node:crypto';

/** TunnelRequestInfo is what the edge knows about an upgrade request besides the key. */
export interface TunnelRequestInfo {
  /** the binding the agent asks to serve */
  bindingId: string;
  remoteAddress: string;
  connectionId: string;
}

/** Grant admits a tunnel connection for one binding. */
export interface Grant {
  ok: true;
  bindingId: string;
  /** public id of the key (never the key): connection caps and revocation use it */
  keyId: string;
  /** how many connections this key may hold at once (HA replicas); absent means no cap */
  maxConnections?: number;
  /** set when several keys share one cap (an account's `tunnels` API keys): the slot is counted under this id, not keyId */
  capId?: string;
  /** store mode: the key's account (re-checks look the key up by it) */
  accountId?: string;
  /** epoch ms after which the connection must close (the key's expiry); absent means none */
  expiresAt?: number;
}

/**
 * Refusal says no. `reason` is for the edge's logs and metrics only; the agent gets a status and a
 * body that do not tell which part was wrong (docs/protocol.md §2).
 */
export interface Refusal {
  ok: false;
  status: 401 | 403;
  reason: 'malformed' | 'unknown-key' | 'wrong-binding' | 'wrong-protocol' | 'expired' | 'revoked';
}

/**
 * TunnelAuthority decides whether a key may serve a binding. The config-file implementation is
 * StaticTunnelAuthority; the persistent store replaces it without the acceptor changing.
 */
export interface TunnelAuthority {
  authorize(key: string, request: TunnelRequestInfo): Promise<Grant | Refusal>;
}

/** KeyRecord is one stored key: only its SHA-256 digest. */
export interface KeyRecord {
  id: string;
  bindingId: string;
  sha256: Buffer;
  maxConnections?: number;
  /** epoch ms; absent means no expiry */
  expiresAt?: number;
}

/** hashTunnelKey returns the SHA-256 digest (hex) that the config file stores for a key. */
export function hashTunnelKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/**
 * StaticTunnelAuthority checks keys against digests from the config file. Every stored digest is
 * compared in constant time and the loop never exits early, so timing does not reveal which
 * binding, if any, a guessed key is close to.
 */
export class StaticTunnelAuthority implements TunnelAuthority {
  readonly #keys: KeyRecord[];
  readonly #now: () => number;

  constructor(keys: KeyRecord[], now: () => number = Date.now) {
    this.#keys = keys;
    this.#now = now;
  }

  authorize(key: string, request: TunnelRequestInfo): Promise<Grant | Refusal> {
    if (key.length === 0 || key.length > 512) return Promise.resolve({ ok: false, status: 401, reason: 'malformed' });
    const digest = createHash('sha256').update(key, 'utf8').digest();
    let found: KeyRecord | undefined;
    for (const record of this.#keys) {
      if (timingSafeEqual(record.sha256, digest) && found === undefined) found = record;
    }
    if (found === undefined) return Promise.resolve({ ok: false, status: 403, reason: 'unknown-key' });
    if (found.bindingId !== request.bindingId) return Promise.resolve({ ok: false, status: 403, reason: 'wrong-binding' });
    if (found.expiresAt !== undefined && found.expiresAt <= this.#now()) {
      return Promise.resolve({ ok: false, status: 403, reason: 'expired' });
    }
    const grant: Grant = { ok: true, bindingId: found.bindingId, keyId: found.id };
    if (found.maxConnections !== undefined) grant.maxConnections = found.maxConnections;
    if (found.expiresAt !== undefined) grant.expiresAt = found.expiresAt;
    return Promise.resolve(grant);
  }
}
