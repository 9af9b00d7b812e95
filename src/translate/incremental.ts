/**
 * IncrementalTranslation: translateSnapshot for a loop that translates one cluster again and again
 * (the operator's syncs), doing again only what a change can affect. Its result equals
 * translateSnapshot's for the same snapshot (test/golden/incremental.test.ts checks it change by
 * change over every golden input).
 */
import { stableStringify } from '../model/index.js';
import { indexSnapshot } from './common/index-snapshot.js';
import { translateCrds } from './crd/index.js';
import { applyBackendTlsPolicies, translateGatewayApi } from './gateway/index.js';
import { IncrementalIngresses } from './ingress/incremental.js';
import { KINDS } from './kinds.js';
import type { Snapshot, SnapshotKey } from './kinds.js';
import { mergeFragments } from './merge.js';
import { applyRoutePolicies } from './policy/index.js';
import { translateLoadBalancerServices } from './service/index.js';
import { defaultTranslateOptions } from './types.js';
import type { TranslateOptions, TranslateResult, TranslatorOutput } from './types.js';

/** TranslationStats says how the last translation was made. */
export interface TranslationStats {
  /** `incremental`: only Ingresses changed and what they affect was translated again; `full`: everything was */
  mode: 'full' | 'incremental';
  /** Ingresses translated again */
  retranslated: number;
  /** objects whose fingerprint changed since the last translation (Ingresses; all objects on a full one) */
  changed: number;
}

/**
 * The snapshot lists no translator reads (the kinds table's `readBy`: EndpointSlices feed the data
 * plane's endpoints only), and the Ingresses, which IncrementalIngresses follows one by one.
 */
const NOT_COMPARED: ReadonlySet<SnapshotKey> = new Set(KINDS.filter((k) => k.readBy.every((r) => r === 'endpoints')).map((k) => k.key).concat(['ingresses']));

/**
 * fingerprintOf says whether an object changed: an API server's object by its uid and
 * resourceVersion (which change with every write), anything else (manifest files, the snapshot's
 * own values) by its content.
 */
export function fingerprintOf(obj: unknown): string {
  const o = obj as { apiVersion?: string; kind?: string; metadata?: { uid?: string; resourceVersion?: string } } | null;
  const uid = o?.metadata?.uid;
  const version = o?.metadata?.resourceVersion;
  if (uid && version) return `${o.apiVersion ?? ''}|${o.kind ?? ''}|${uid}|${version}`;
  return stableStringify(obj);
}

/**
 * IncrementalTranslation translates successive snapshots of one source. When only Ingresses (and
 * EndpointSlices) changed and no RoutePolicy or BackendTLSPolicy exists (those passes rewrite
 * routes of every translator in place), it re-translates only the Ingresses the change can affect
 * (IncrementalIngresses) and reuses the other translators' output; otherwise it translates
 * everything, as translateSnapshot does, and keeps the parts for the next time.
 */
export class IncrementalTranslation {
  readonly #options: TranslateOptions;
  readonly #ingresses = new IncrementalIngresses();
  #rest: string[] | undefined;
  #others: TranslatorOutput[] | undefined;
  #stats: TranslationStats = { mode: 'full', retranslated: 0, changed: 0 };

  constructor(options: Partial<TranslateOptions> = {}) {
    this.#options = { ...defaultTranslateOptions, ...options };
  }

  /** stats says how the last `translate` was made. */
  get stats(): TranslationStats {
    return this.#stats;
  }

  /** translate gives translateSnapshot(snapshot, options), re-translating only what changed since the last call where it can. */
  translate(snapshot: Snapshot): TranslateResult {
    const opts = this.#options;
    const index = indexSnapshot(snapshot);
    const rest = restPrints(snapshot);
    const canSplice = snapshot.routePolicies.length === 0 && snapshot.backendTlsPolicies.length === 0;
    const isRestSame = canSplice && this.#others !== undefined && sameStrings(this.#rest, rest);
    const spliced = isRestSame ? this.#ingresses.update(index, opts, fingerprintOf) : undefined;
    const ingress = spliced ?? this.#ingresses.rebuild(index, opts, fingerprintOf);
    const others = spliced && this.#others ? this.#others : [translateLoadBalancerServices(index, opts), translateGatewayApi(index, opts), translateCrds(index, opts)];
    this.#rest = rest;
    // route and backend TLS policies rewrite routes in place: nothing is kept to be used again then
    this.#others = canSplice ? others : undefined;
    this.#stats = spliced
      ? { mode: 'incremental', ...spliced.stats }
      : { mode: 'full', retranslated: ingress.stats.retranslated, changed: rest.length + snapshot.ingresses.length };
    const outputs = [ingress.output, ...others];
    const merged = mergeFragments(
      outputs.flatMap((o) => o.fragments),
      outputs.flatMap((o) => o.statuses),
    );
    return applyBackendTlsPolicies(index, opts, applyRoutePolicies(index, opts, merged));
  }
}

/** restPrints fingerprints every object the translators other than the Ingress one read, list by list. */
function restPrints(snapshot: Snapshot): string[] {
  const out: string[] = [];
  for (const key of Object.keys(snapshot) as SnapshotKey[]) {
    if (NOT_COMPARED.has(key)) continue;
    out.push(`#${key}`);
    for (const o of snapshot[key] as unknown[]) out.push(fingerprintOf(o));
  }
  return out;
}

function sameStrings(a: readonly string[] | undefined, b: readonly string[]): boolean {
  if (a === undefined || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
