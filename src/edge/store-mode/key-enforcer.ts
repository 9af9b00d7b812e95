import type { ServedKey, Store } from '../store/index.js';
import type { Grant, TunnelRegistry } from '../tunnels/index.js';
import { API_KEY_GRANT_PREFIX } from './store-authority.js';

/** EnforcerStore is the store as the key enforcer reads it after accept: only what it uses (docs/architecture.md, narrow interfaces). */
export type EnforcerStore = Pick<Store, 'getTunnelKey' | 'listApiKeys' | 'watchTunnelKeyRevocations'>;

/** KeyFeed is where the enforcer hears tunnel key rows as the store's change feed brings them (StoreBindingDirectory). */
export interface KeyFeed {
  subscribeKeys(listener: (keys: readonly ServedKey[]) => void): () => void;
}

/** TunnelKeyEnforcerOptions configures the enforcer. */
export interface TunnelKeyEnforcerOptions {
  store: EnforcerStore;
  registry: TunnelRegistry;
  now?: () => number;
  /** how often live connections are checked against their keys' expiry (default 250 ms, no I/O) */
  sweepMs?: number;
  /** how often each live key is re-read from the store (default 10 s): catches revocations missed while LISTEN was down, and rotations */
  recheckMs?: number;
  /**
   * the change feed's key rows: with it, revocations and rotations of tunnel keys come from the feed
   * and the re-check reads only the API-key grants, so its cost does not grow with the tunnels
   */
  keyFeed?: KeyFeed;
  log?: (line: string) => void;
}

const REMEMBER_REVOKED_MS = 60_000;

interface Tracked {
  accountId: string;
  expiresAt: number | undefined;
}

/**
 * TunnelKeyEnforcer keeps live tunnels within what their keys allow after accept (docs/edge.md "Enforcement"):
 * - a revoked key's connections close as soon as the store announces it (`watchTunnelKeyRevocations`:
 *   PostgreSQL NOTIFY reaches every node, so a key revoked through node A closes on node B too);
 * - an expired key's connections close on the next sweep after its expiry (`sweepMs`);
 * - every `recheckMs` each live key is read again, because notifications sent while this node's
 *   LISTEN connection was down are lost, and a rotation moves the expiry.
 * Closing is immediate (`destroy`), not a drain: a revoked key may belong to an attacker.
 */
export class TunnelKeyEnforcer {
  readonly #options: TunnelKeyEnforcerOptions;
  readonly #now: () => number;
  readonly #tracked = new Map<string, Tracked>();
  readonly #recentlyRevoked = new Map<string, number>();
  #timers: NodeJS.Timeout[] = [];
  #unwatch: (() => Promise<void>) | undefined;
  #unfeed: (() => void) | undefined;
  #rechecking = false;
  /**
   * no tracked key expires before this (undefined: none has an expiry); it may be early (a key closed
   * or rotated since), never late. The sweep looks at the keys only once it has passed, so a tick
   * costs nothing at 10,000 tunnels (a sweep of every key on every tick made the edge's idle CPU grow
   * with the tunnels).
   */
  #nextExpiry: number | undefined;

  constructor(options: TunnelKeyEnforcerOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  /** start subscribes to revocations and starts the sweeps. */
  async start(): Promise<void> {
    this.#unwatch = await this.#options.store.watchTunnelKeyRevocations((ids) => this.closeKeys(ids, 'revoked'));
    this.#unfeed = this.#options.keyFeed?.subscribeKeys((keys) => this.#applyKeyRows(keys));
    const sweep = setInterval(() => this.#sweepExpired(), this.#options.sweepMs ?? 250);
    const recheck = setInterval(() => void this.#recheck(), this.#options.recheckMs ?? 10_000);
    sweep.unref();
    recheck.unref();
    this.#timers = [sweep, recheck];
  }

  /** stop ends the sweeps and the subscription. */
  async stop(): Promise<void> {
    for (const timer of this.#timers) clearInterval(timer);
    this.#timers = [];
    this.#unfeed?.();
    this.#unfeed = undefined;
    await this.#unwatch?.();
    this.#unwatch = undefined;
  }

  /**
   * track records the account and expiry of a granted key; the acceptor calls it once the tunnel is
   * registered. A key revoked between its check and this moment (the handshake is still running)
   * is closed here, so the revocation cannot slip past a connection being set up.
   */
  track(grant: Grant): void {
    if (this.#recentlyRevoked.has(grant.keyId)) return this.closeKeys([grant.keyId], 'revoked');
    if (grant.accountId === undefined) return;
    this.#tracked.set(grant.keyId, { accountId: grant.accountId, expiresAt: grant.expiresAt });
    this.#noteExpiry(grant.expiresAt);
  }

  /** closeKeys drops every live connection of the keys now. */
  closeKeys(keyIds: readonly string[], why: string): void {
    const ids = new Set(keyIds);
    if (why === 'revoked') this.#rememberRevoked(ids);
    let closed = 0;
    for (const tunnel of this.#options.registry.all()) {
      if (!ids.has(tunnel.keyId)) continue;
      tunnel.destroy();
      closed++;
    }
    for (const id of ids) this.#tracked.delete(id);
    if (closed > 0) this.#options.log?.(`closed ${closed} tunnel connection(s) of ${ids.size} ${why} key(s)`);
  }

  // A key row from the feed is the key's state now: revoked (directly, by a release or a disabled
  // account; whether or not the notification reached this node) closes its tunnels, and a live one
  // carries its expiry (moved by a rotation).
  #applyKeyRows(keys: readonly ServedKey[]): void {
    const revoked: string[] = [];
    for (const key of keys) {
      if (!key.isLive) revoked.push(key.id);
      else {
        const tracked = this.#tracked.get(key.id);
        if (tracked === undefined) continue;
        tracked.expiresAt = key.expiresAt;
        this.#noteExpiry(key.expiresAt);
      }
    }
    if (revoked.length > 0) this.closeKeys(revoked, 'revoked');
  }

  // Handshakes finish within the agent's handshake timeout (seconds), so a minute is plenty.
  #rememberRevoked(ids: Set<string>): void {
    const now = this.#now();
    for (const [id, at] of this.#recentlyRevoked) if (at < now - REMEMBER_REVOKED_MS) this.#recentlyRevoked.delete(id);
    for (const id of ids) this.#recentlyRevoked.set(id, now);
  }

  #noteExpiry(at: number | undefined): void {
    if (at !== undefined && (this.#nextExpiry === undefined || at < this.#nextExpiry)) this.#nextExpiry = at;
  }

  #sweepExpired(): void {
    const now = this.#now();
    if (this.#nextExpiry === undefined || now < this.#nextExpiry) return;
    const expired: string[] = [];
    let next: number | undefined;
    for (const [id, t] of this.#tracked) {
      if (t.expiresAt === undefined) continue;
      if (t.expiresAt <= now) expired.push(id);
      else if (next === undefined || t.expiresAt < next) next = t.expiresAt;
    }
    this.#nextExpiry = next;
    if (expired.length > 0) this.closeKeys(expired, 'expired');
  }

  async #recheck(): Promise<void> {
    if (this.#rechecking) return;
    this.#rechecking = true;
    try {
      const live = new Set(this.#options.registry.all().map((t) => t.keyId));
      for (const id of this.#tracked.keys()) if (!live.has(id)) this.#tracked.delete(id);
      const dead: string[] = [];
      const reread = [...this.#tracked].filter(([id]) => this.#options.keyFeed === undefined || id.startsWith(API_KEY_GRANT_PREFIX));
      await Promise.all(reread.map(async ([id, tracked]) => {
        if (!(await this.#isStillValid(id, tracked))) dead.push(id);
      }));
      if (dead.length > 0) this.closeKeys(dead, 'revoked or expired');
    } catch (err) {
      this.#options.log?.(`key re-check failed: ${(err as Error).name} ${(err as { code?: string }).code ?? ''}`.trim());
    } finally {
      this.#rechecking = false;
    }
  }

  async #isStillValid(id: string, tracked: Tracked): Promise<boolean> {
    const { store } = this.#options;
    if (id.startsWith(API_KEY_GRANT_PREFIX)) {
      const apiKeyId = id.slice(API_KEY_GRANT_PREFIX.length);
      const keys = await store.listApiKeys(tracked.accountId);
      return keys.some((k) => k.id === apiKeyId && k.scopes.includes('tunnels'));
    }
    const key = await store.getTunnelKey(tracked.accountId, id);
    if (key === undefined || key.revokedAt !== null || key.expiresAt <= this.#now()) return false;
    tracked.expiresAt = key.expiresAt;
    this.#noteExpiry(key.expiresAt);
    return true;
  }
}
