/**
 * The Ingress translation kept between syncs: per Ingress its status and hosts, per host its graph
 * nodes, so that a change re-translates only the Ingresses it can affect. At 10,000 Ingresses a
 * whole translation of them took about 285 ms of a 675 ms sync (docs/tunnel-performance.md §13).
 */
import type { V1Ingress } from '@kubernetes/client-node';
import type { ObjectStatus } from '../../model/index.js';
import type { SnapshotIndex } from '../common/index-snapshot.js';
import { namespaceOf } from '../common/meta.js';
import type { TranslateOptions, TranslatorOutput } from '../types.js';
import type { IngressGraph } from './build-graph.js';
import { ingressHostsOf, joinIngressParts, translateIngressParts } from './index.js';
import type { IngressParts } from './index.js';

/** IngressSpliceStats says what the last `update` did. */
export interface IngressSpliceStats {
  /** Ingresses translated again (all of them for a rebuild) */
  retranslated: number;
  /** Ingresses whose fingerprint changed, appeared or went */
  changed: number;
}

/**
 * IncrementalIngresses holds the last Ingress translation as IngressParts and splices changes into
 * it. A changed (new, modified, deleted) Ingress affects the hosts it touched before and touches
 * now; every Ingress touching one of those hosts is translated again with it, and so on through
 * the hosts of those (the connected part of the Ingress–host graph), because conflicts between
 * Ingresses are decided per host in precedence order (route-table.ts, tls.ts) and an Ingress's
 * status reports every host it touches. Ingresses outside that part share no host with it: their
 * statuses and hosts' nodes are kept as they were.
 *
 * It is valid only while everything else the Ingress translator reads (Services, Secrets,
 * IngressClasses, ConfigMaps, the options) is unchanged: the caller rebuilds otherwise.
 */
export class IncrementalIngresses {
  readonly #hostsOf = new Map<string, string[]>();
  readonly #keysOf = new Map<string, Set<string>>();
  readonly #statuses = new Map<string, ObjectStatus>();
  readonly #hosts = new Map<string, IngressGraph>();
  #prints = new Map<string, string>();
  #isBuilt = false;

  /** rebuild translates every Ingress of the snapshot and keeps the parts (undefined parts: the snapshot cannot be spliced later). */
  rebuild(index: SnapshotIndex, options: TranslateOptions, fingerprint: (o: V1Ingress) => string): { output: TranslatorOutput; stats: IngressSpliceStats } {
    const parts = translateIngressParts(index, options);
    this.#clear();
    const prints = printsOf(index.snapshot.ingresses, fingerprint);
    if (!parts.hasDuplicates && prints !== undefined) {
      this.#record(parts);
      this.#prints = prints;
      this.#isBuilt = true;
    }
    const n = index.snapshot.ingresses.length;
    return { output: joinIngressParts(parts), stats: { retranslated: n, changed: n } };
  }

  /**
   * update splices the snapshot's Ingresses into the kept parts, or answers undefined when it
   * cannot (nothing kept yet, one `namespace/name` twice): the caller rebuilds then.
   */
  update(index: SnapshotIndex, options: TranslateOptions, fingerprint: (o: V1Ingress) => string): { output: TranslatorOutput; stats: IngressSpliceStats } | undefined {
    if (!this.#isBuilt) return undefined;
    const current = new Map<string, V1Ingress>();
    for (const ingress of index.snapshot.ingresses) {
      const key = keyOf(ingress);
      if (current.has(key)) return undefined;
      current.set(key, ingress);
    }
    const prints = new Map<string, string>();
    const changed: string[] = [];
    for (const [key, ingress] of current) {
      const print = fingerprint(ingress);
      prints.set(key, print);
      if (this.#prints.get(key) !== print) changed.push(key);
    }
    const removed = [...this.#prints.keys()].filter((key) => !current.has(key));
    this.#prints = prints;
    if (changed.length === 0 && removed.length === 0) return { output: this.#join(), stats: { retranslated: 0, changed: 0 } };

    const affected = this.#affected(changed, removed, current, index, options);
    const sub = translateIngressParts({ ...index, snapshot: { ...index.snapshot, ingresses: [...affected.keys].map((k) => current.get(k)!) } }, options);
    for (const key of [...affected.keys, ...removed]) this.#forget(key);
    for (const host of affected.hosts) this.#hosts.delete(host);
    this.#record(sub);
    return { output: this.#join(), stats: { retranslated: affected.keys.size, changed: changed.length + removed.length } };
  }

  /**
   * affected closes the changed Ingresses over shared hosts: the hosts they touched and touch now,
   * every kept Ingress touching one of those, the hosts of those, until nothing is added.
   */
  #affected(changed: string[], removed: string[], current: Map<string, V1Ingress>, index: SnapshotIndex, options: TranslateOptions): { keys: Set<string>; hosts: Set<string> } {
    const keys = new Set(changed);
    const hosts = new Set<string>();
    for (const key of [...changed, ...removed]) for (const h of this.#hostsOf.get(key) ?? []) hosts.add(h);
    const now = ingressHostsOf(changed.map((k) => current.get(k)!), index, options);
    for (const list of now.values()) for (const h of list) hosts.add(h);
    const gone = new Set(removed);
    const queue = [...hosts];
    for (let host = queue.pop(); host !== undefined; host = queue.pop()) {
      for (const key of this.#keysOf.get(host) ?? []) {
        if (keys.has(key) || gone.has(key)) continue;
        keys.add(key);
        for (const h of this.#hostsOf.get(key) ?? []) {
          if (hosts.has(h)) continue;
          hosts.add(h);
          queue.push(h);
        }
      }
    }
    return { keys, hosts };
  }

  #record(parts: IngressParts): void {
    for (const [key, hosts] of parts.hostsOf) {
      this.#hostsOf.set(key, hosts);
      for (const h of hosts) {
        let set = this.#keysOf.get(h);
        if (!set) this.#keysOf.set(h, (set = new Set()));
        set.add(key);
      }
    }
    for (const [key, status] of parts.statuses) this.#statuses.set(key, status);
    for (const [host, graph] of parts.hosts) this.#hosts.set(host, graph);
  }

  #forget(key: string): void {
    for (const h of this.#hostsOf.get(key) ?? []) {
      const set = this.#keysOf.get(h);
      set?.delete(key);
      if (set?.size === 0) this.#keysOf.delete(h);
    }
    this.#hostsOf.delete(key);
    this.#statuses.delete(key);
  }

  #join(): TranslatorOutput {
    return joinIngressParts({ hostsOf: this.#hostsOf, statuses: this.#statuses, hosts: this.#hosts, hasDuplicates: false });
  }

  #clear(): void {
    this.#hostsOf.clear();
    this.#keysOf.clear();
    this.#statuses.clear();
    this.#hosts.clear();
    this.#prints = new Map();
    this.#isBuilt = false;
  }
}

function keyOf(ingress: V1Ingress): string {
  return `${namespaceOf(ingress)}/${ingress.metadata?.name ?? ''}`;
}

/** printsOf fingerprints the Ingresses by `namespace/name`, undefined when one name comes twice. */
function printsOf(ingresses: readonly V1Ingress[], fingerprint: (o: V1Ingress) => string): Map<string, string> | undefined {
  const out = new Map<string, string>();
  for (const ingress of ingresses) {
    const key = keyOf(ingress);
    if (out.has(key)) return undefined;
    out.set(key, fingerprint(ingress));
  }
  return out;
}
