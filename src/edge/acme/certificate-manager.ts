import { X509Certificate } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import type { SecureContext } from 'node:tls';
import type { Certificate, PutCertificateInput } from '../store/index.js';
import type { CertificateIssuer, IssuedCertificate } from './acme-issuer.js';
import type { CertificateProvider } from './certificate-provider.js';
import { AcmeNotAllowedError } from './errors.js';
import type { TlsAlpnChallenges } from './tls-alpn-challenges.js';

/** CertificateStore is the part of the edge store the manager uses. */
export interface CertificateStore {
  getCertificate(hostname: string): Promise<Certificate | undefined>;
  putCertificate(input: PutCertificateInput, actor: string): Promise<Certificate>;
  listCertificates(query?: { notAfterBefore?: number }): Promise<Certificate[]>;
}

/** Scheduler is setTimeout/clearTimeout (fake in tests, with the clock). */
export interface Scheduler {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** StaticCertificate is a configured certificate, e.g. `*.<base domain>`; never renewed by the edge. */
export interface StaticCertificate {
  hostnames: string[];
  cert: string;
  key: string;
}

/** CertificateManagerOptions wire a manager; only `store` is required. */
export interface CertificateManagerOptions {
  store: CertificateStore;
  /** issues (ACME); without it the manager serves stored and static certificates only */
  issuer?: CertificateIssuer;
  /** the issuer's TLS-ALPN-01 challenges, answered through `challenge()` */
  challenges?: TlsAlpnChallenges;
  /** may the edge get a certificate for this name (a reserved, verified hostname)? */
  isIssuable?: (hostname: string) => Promise<boolean>;
  staticCertificates?: StaticCertificate[];
  now?: () => number;
  scheduler?: Scheduler;
  /** renew once this fraction of a certificate's lifetime has passed (default 2/3) */
  renewAtFraction?: number;
  /** after a failed order, do not try the same name again for this long (CA rate limits; default 10 min) */
  retryAfterFailureMs?: number;
  /** a name with no stored certificate is looked up in the store again after this long (default 30 s) */
  negativeCacheMs?: number;
  log?: (line: string) => void;
}

interface Entry {
  context: SecureContext;
  notBefore: number;
  notAfter: number;
}

const ACTOR = 'system:acme';
// setTimeout holds at most 2^31-1 ms; and other edge nodes may renew first, so look again hourly.
const MAX_TIMER_MS = 3_600_000;
// SNI names come from strangers: the "known absent" maps are bounded, dropped whole when full.
const MAX_REMEMBERED_MISSES = 10_000;

/**
 * CertificateManager is the edge's CertificateProvider: certificates from the store (exact name,
 * then `*.parent`), static ones from config, ACME issuance on demand for issuable names with one
 * order in flight per name, and renewal at 2/3 of the lifetime on a timer.
 */
export class CertificateManager implements CertificateProvider {
  readonly #o: CertificateManagerOptions;
  readonly #now: () => number;
  readonly #scheduler: Scheduler;
  readonly #cache = new Map<string, Entry>();
  readonly #missing = new Map<string, number>();
  readonly #static = new Map<string, SecureContext>();
  readonly #inFlight = new Map<string, Promise<Entry>>();
  readonly #failedAt = new Map<string, number>();
  readonly #notIssuable = new Map<string, number>();
  #timer: unknown;
  #isClosed = false;

  constructor(options: CertificateManagerOptions) {
    this.#o = options;
    this.#now = options.now ?? Date.now;
    this.#scheduler = options.scheduler ?? { setTimeout: (fn, ms) => setTimeout(fn, ms), clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout) };
    for (const c of options.staticCertificates ?? []) {
      const context = createSecureContext({ cert: c.cert, key: c.key });
      for (const name of c.hostnames) this.#static.set(name.toLowerCase(), context);
    }
  }

  /** start loads the stored certificates and arms the renewal timer. */
  async start(): Promise<void> {
    for (const cert of await this.#o.store.listCertificates()) this.#remember(cert.hostname, cert);
    this.#arm(0);
  }

  /** close stops the renewal timer; orders in flight finish but nothing new starts. */
  close(): void {
    this.#isClosed = true;
    if (this.#timer !== undefined) this.#scheduler.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** expiries lists the stored certificates this node has loaded and when each expires (the config's static ones are the edge's own to list). */
  expiries(): { hostname: string; notAfter: number }[] {
    return [...this.#cache].map(([hostname, entry]) => ({ hostname, notAfter: entry.notAfter }));
  }

  /** challenge answers TLS-ALPN-01 validators. */
  challenge(servername: string): SecureContext | undefined {
    return this.#o.challenges?.contextFor(servername);
  }

  /**
   * resolve finds a context: stored or static exact, then stored or static wildcard, then issued on
   * demand. A covering wildcard comes before an order: with `*.<base domain>` configured, ACME is
   * needed only for custom domains, and needless orders would spend the CA's rate limits.
   */
  async resolve(servername: string): Promise<SecureContext | undefined> {
    const name = servername.toLowerCase();
    const exact = (await this.#lookup(name)) ?? this.#static.get(name);
    if (exact !== undefined) return exact;
    const dot = name.indexOf('.');
    const wildcard = dot > 0 ? `*${name.slice(dot)}` : undefined;
    const covering = wildcard === undefined ? undefined : ((await this.#lookup(wildcard)) ?? this.#static.get(wildcard));
    if (covering !== undefined) return covering;
    if (name !== '' && this.#o.issuer !== undefined && !this.#isClosed && (await this.#mayIssue(name))) {
      return this.ensure(name).catch(() => undefined);
    }
    return undefined;
  }

  /** ensure returns a valid certificate for the name, issuing one if needed; concurrent callers share one order. */
  async ensure(hostname: string): Promise<SecureContext> {
    const name = hostname.toLowerCase();
    // An explicit ask (e.g. right after the reservation was made) checks the policy afresh.
    this.#notIssuable.delete(name);
    const current = await this.#lookup(name);
    if (current !== undefined) return current;
    return (await this.#issueOnce(name)).context;
  }

  /** renewDue renews every stored certificate past its renewal point; returns the names renewed. */
  async renewDue(): Promise<string[]> {
    const renewed: string[] = [];
    for (const cert of await this.#o.store.listCertificates()) {
      const entry = this.#remember(cert.hostname, cert);
      if (entry === undefined || this.#now() < this.#renewAt(entry) || this.#isClosed) continue;
      if (!(await this.#mayIssue(cert.hostname))) continue;
      try {
        await this.#issueOnce(cert.hostname);
        renewed.push(cert.hostname);
      } catch (err) {
        this.#o.log?.(`certificate renewal for ${cert.hostname} failed: ${(err as Error).message}`);
      }
    }
    return renewed;
  }

  #issueOnce(name: string): Promise<Entry> {
    const running = this.#inFlight.get(name);
    if (running !== undefined) return running;
    const order = this.#issue(name).finally(() => this.#inFlight.delete(name));
    this.#inFlight.set(name, order);
    return order;
  }

  async #issue(name: string): Promise<Entry> {
    const issuer = this.#o.issuer;
    if (issuer === undefined || !(await this.#mayIssue(name))) throw new AcmeNotAllowedError(name);
    let issued: IssuedCertificate;
    try {
      issued = await issuer.issue(name);
    } catch (err) {
      this.#failedAt.set(name, this.#now());
      const code = (err as { code?: unknown }).code;
      this.#o.log?.(`certificate order for ${name} failed${typeof code === 'string' ? ` (${code})` : ''}: ${(err as Error).message}`);
      throw err;
    }
    this.#failedAt.delete(name);
    const stored = await this.#o.store.putCertificate({ hostname: name, chainPem: issued.chainPem, keyPem: issued.keyPem, notAfter: issued.notAfter }, ACTOR);
    this.#o.log?.(`certificate for ${name} issued, valid until ${new Date(issued.notAfter).toISOString()}`);
    const entry = this.#remember(name, stored);
    if (entry === undefined) throw new AcmeNotAllowedError(name);
    this.#arm(this.#retryMs());
    return entry;
  }

  async #mayIssue(name: string): Promise<boolean> {
    const failed = this.#failedAt.get(name);
    if (failed !== undefined && this.#now() - failed < this.#retryMs()) return false;
    // A refused name is not asked again for negativeCacheMs: a flood of made-up SNI names costs no queries.
    const refusedAt = this.#notIssuable.get(name);
    if (refusedAt !== undefined && this.#now() - refusedAt < this.#negativeMs()) return false;
    const isIssuable = (await this.#o.isIssuable?.(name)) ?? false;
    if (isIssuable) this.#notIssuable.delete(name);
    else remember(this.#notIssuable, name, this.#now());
    return isIssuable;
  }

  // Cached (and unexpired) first; a miss asks the store, which another edge node may have filled.
  async #lookup(name: string): Promise<SecureContext | undefined> {
    const cached = this.#cache.get(name);
    if (cached !== undefined && cached.notAfter > this.#now()) return cached.context;
    const missedAt = this.#missing.get(name);
    if (missedAt !== undefined && this.#now() - missedAt < this.#negativeMs()) return undefined;
    const stored = await this.#o.store.getCertificate(name);
    const entry = stored === undefined ? undefined : this.#remember(name, stored);
    if (entry === undefined || entry.notAfter <= this.#now()) {
      remember(this.#missing, name, this.#now());
      return undefined;
    }
    this.#missing.delete(name);
    return entry.context;
  }

  #remember(name: string, cert: Certificate): Entry | undefined {
    const cached = this.#cache.get(name);
    try {
      const leaf = new X509Certificate(cert.chainPem);
      if (cached !== undefined && cached.notAfter === cert.notAfter) return cached;
      const context = createSecureContext({ cert: cert.chainPem, key: cert.keyPem });
      const entry = { context, notBefore: Date.parse(leaf.validFrom), notAfter: cert.notAfter };
      this.#cache.set(name, entry);
      this.#missing.delete(name);
      return entry;
    } catch (err) {
      this.#o.log?.(`stored certificate for ${name} is unusable: ${(err as Error).message}`);
      return undefined;
    }
  }

  #renewAt(entry: Entry): number {
    return entry.notBefore + (entry.notAfter - entry.notBefore) * (this.#o.renewAtFraction ?? 2 / 3);
  }

  #negativeMs(): number {
    return this.#o.negativeCacheMs ?? 30_000;
  }

  #retryMs(): number {
    return this.#o.retryAfterFailureMs ?? 600_000;
  }

  // One timer for the earliest renewal point among cached certificates (capped; see MAX_TIMER_MS).
  // A certificate already due (just tried, or not renewable here) waits `dueDelayMs`, so a renewal
  // that keeps failing cannot spin.
  #arm(dueDelayMs: number): void {
    if (this.#isClosed) return;
    if (this.#timer !== undefined) this.#scheduler.clearTimeout(this.#timer);
    const now = this.#now();
    let delay = MAX_TIMER_MS;
    for (const entry of this.#cache.values()) {
      const at = this.#renewAt(entry);
      delay = Math.min(delay, at > now ? at - now : dueDelayMs);
    }
    this.#timer = this.#scheduler.setTimeout(() => {
      this.#timer = undefined;
      this.renewDue()
        .catch((err: Error) => this.#o.log?.(`certificate renewal: ${err.message}`))
        .finally(() => this.#arm(this.#retryMs()));
    }, delay);
  }
}

function remember(map: Map<string, number>, name: string, at: number): void {
  if (map.size >= MAX_REMEMBERED_MISSES) map.clear();
  map.set(name, at);
}
