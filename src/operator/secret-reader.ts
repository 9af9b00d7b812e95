import { CoreV1Api } from '@kubernetes/client-node';
import type { KubeConfig, KubernetesObject, V1Secret } from '@kubernetes/client-node';
import { CodedError } from '../model/index.js';
import type { SecretRef, TunaCode } from '../model/index.js';

/**
 * SecretGetter reads one Secret by name: undefined when it does not exist (404); any other failure
 * throws with the API's `code` (403 when RBAC forbids it).
 */
export interface SecretGetter {
  get(ref: SecretRef): Promise<V1Secret | undefined>;
}

/** CoreSecretGetter is the SecretGetter of a cluster: `GET /api/v1/namespaces/<ns>/secrets/<name>` (RBAC verb get, never list). */
export class CoreSecretGetter implements SecretGetter {
  readonly #core: CoreV1Api;

  constructor(config: KubeConfig) {
    this.#core = config.makeApiClient(CoreV1Api);
  }

  async get(ref: SecretRef): Promise<V1Secret | undefined> {
    try {
      return await this.#core.readNamespacedSecret({ name: ref.name, namespace: ref.namespace });
    } catch (err) {
      if (codeOf(err) === 404) return undefined;
      throw err;
    }
  }
}

/** SecretReadError: a Secret a listener names could not be read, for a reason other than absent or forbidden. */
export class SecretReadError extends CodedError<TunaCode> {
  constructor(
    readonly ref: SecretRef,
    override readonly cause: unknown,
  ) {
    super('TUNA_SECRET_READ', `could not read Secret ${ref.namespace}/${ref.name}: ${cause instanceof Error ? cause.message : String(cause)}`);
  }
}

/** SecretReaderOptions tune the reader. */
export interface SecretReaderOptions {
  /** how often the Secrets last read are read again, so a rotated certificate is served (default 30 s; 0: never) */
  refreshMs?: number;
  /**
   * hears of each Secret the operator may not read (403), once until it can again: it is treated as
   * absent, so its listeners are InvalidCertificateRef. Also of a read that failed while an earlier
   * copy is kept. One line each; never any data.
   */
  onProblem?: (line: string) => void;
}

/** Held is what the reader knows of one Secret: the object, absent, or forbidden. */
type Held = { secret: V1Secret } | { absent: true } | { forbidden: true };

/**
 * SecretReader fetches, by name, exactly the Secrets the translators will read (referencedSecrets
 * in src/translate): Secrets are not watched, since a watch needs `list` on every Secret of the
 * cluster; the operator may only `get` (config/rbac/operator.yaml). Each sync reads them afresh
 * (`read`), and every `refreshMs` the reader reads the last set again and reports a change
 * (`onChange`) when one was created, deleted, rotated or became readable, so the next sync serves it.
 *
 * A Secret that does not exist (404) is absent; one RBAC forbids (403) is reported once and treated
 * as absent; any other failure keeps the copy read before (reported), or, with none, fails the
 * sync (SecretReadError), which the operator retries: a passing apiserver hiccup must not write
 * "does not exist" into a Gateway's status. Key material is returned to the caller only (for the
 * translators' redacted snapshot and the data plane's certificate source), never logged.
 */
export class SecretReader {
  readonly #getter: SecretGetter;
  readonly #refreshMs: number;
  readonly #onProblem: (line: string) => void;
  readonly #listeners = new Set<() => void>();
  #held = new Map<string, Held>();
  /** keys reported (forbidden, or a failed read with a copy kept) until they read cleanly again */
  readonly #reported = new Set<string>();
  #timer: NodeJS.Timeout | undefined;
  #refreshing: Promise<void> | undefined;
  #isStopped = false;

  constructor(getter: SecretGetter, options: SecretReaderOptions = {}) {
    this.#getter = getter;
    this.#refreshMs = options.refreshMs ?? 30_000;
    this.#onProblem = options.onProblem ?? (() => undefined);
  }

  /** onChange registers a callback for "a Secret last read has changed" (found by the refresh). */
  onChange(callback: () => void): void {
    this.#listeners.add(callback);
  }

  /**
   * read fetches the Secrets named by `refs` and returns those that exist and may be read, as plain
   * objects stamped `apiVersion: v1, kind: Secret` (for snapshotFromObjects). The refresh follows
   * this set from now on.
   */
  async read(refs: readonly SecretRef[]): Promise<KubernetesObject[]> {
    const held = new Map<string, Held>();
    for (const ref of refs) held.set(keyOf(ref), await this.#fetch(ref, true));
    this.#held = held;
    this.#arm();
    const out: KubernetesObject[] = [];
    for (const h of held.values()) if ('secret' in h) out.push({ ...h.secret, apiVersion: 'v1', kind: 'Secret' } as KubernetesObject);
    return out;
  }

  /** refresh reads the last set again and calls the `onChange` callbacks when any Secret differs. */
  async refresh(): Promise<void> {
    let changed = false;
    for (const [key, before] of this.#held) {
      const ref = refOf(key);
      let now: Held;
      try {
        now = await this.#fetch(ref, false);
      } catch {
        continue; // reported by #fetch; the next refresh or sync tries again
      }
      if (signatureOf(now) !== signatureOf(before)) changed = true;
    }
    if (changed && !this.#isStopped) for (const l of this.#listeners) l();
  }

  /** stop ends the refresh timer (and waits for a refresh under way). */
  async stop(): Promise<void> {
    this.#isStopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#refreshing;
  }

  /** fetch reads one Secret; `keepOnFailure`: on a failure other than 403, the copy held before is returned (or SecretReadError thrown). */
  async #fetch(ref: SecretRef, keepOnFailure: boolean): Promise<Held> {
    const key = keyOf(ref);
    try {
      const secret = await this.#getter.get(ref);
      this.#reported.delete(key);
      return secret === undefined ? { absent: true } : { secret };
    } catch (err) {
      if (codeOf(err) === 403) {
        if (!this.#reported.has(key))
          this.#onProblem(`Secret ${key} may not be read (403 Forbidden): its listeners are InvalidCertificateRef until the operator's role allows get on secrets (docs/operator.md)`);
        this.#reported.add(key);
        return { forbidden: true };
      }
      const before = this.#held.get(key);
      if (!this.#reported.has(key)) this.#onProblem(`Secret ${key} could not be read (${describe(err)})${before && 'secret' in before ? '; serving the copy read before' : ''}`);
      this.#reported.add(key);
      if (before && 'secret' in before && keepOnFailure) return before;
      throw new SecretReadError(ref, err);
    }
  }

  /** arm (re)starts the refresh timer while there is something to follow. */
  #arm(): void {
    if (this.#isStopped || this.#refreshMs <= 0 || this.#timer !== undefined || this.#held.size === 0) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#refreshing = this.refresh().finally(() => {
        this.#refreshing = undefined;
        this.#arm();
      });
    }, this.#refreshMs);
    this.#timer.unref();
  }
}

function keyOf(ref: SecretRef): string {
  return `${ref.namespace}/${ref.name}`;
}

function refOf(key: string): SecretRef {
  const slash = key.indexOf('/');
  return { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

/** signatureOf tells two readings apart: the resourceVersion changes with every write to a Secret. */
function signatureOf(h: Held): string {
  if ('absent' in h) return 'absent';
  if ('forbidden' in h) return 'forbidden';
  return `rv:${h.secret.metadata?.resourceVersion ?? ''}:${h.secret.metadata?.uid ?? ''}`;
}

function codeOf(err: unknown): number | undefined {
  const e = err as { code?: unknown; statusCode?: unknown } | null;
  if (typeof e?.code === 'number') return e.code;
  return typeof e?.statusCode === 'number' ? e.statusCode : undefined;
}

/** describe names a failure by its code or message (an API error's body is not quoted). */
function describe(err: unknown): string {
  const code = codeOf(err);
  if (code !== undefined) return `HTTP ${code}`;
  return err instanceof Error ? err.message : String(err);
}
