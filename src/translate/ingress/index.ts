/**
 * The Ingress translator (networking.k8s.io/v1): every Ingress of tuna's class becomes host
 * bindings with http (and, with `spec.tls`, https) listeners whose routes go to Services of the
 * Ingress's own namespace. All tuna Ingresses form one fragment group, so several of them merge on
 * one host; conflicts between them are decided here, oldest first. See docs/translators/ingress.md.
 */
import type { SnapshotIndex } from '../common/index-snapshot.js';
import { StatusBook } from '../common/meta.js';
import { warning } from '../common/status.js';
import type { TranslateOptions, TranslatorOutput } from '../types.js';
import type { V1Ingress } from '@kubernetes/client-node';
import type { ObjectStatus } from '../../model/index.js';
import { buildHostGraphs, joinHostGraphs } from './build-graph.js';
import type { IngressGraph } from './build-graph.js';
import { collectIngress } from './collect.js';
import type { IngressEntry } from './entry.js';
import { compareEntries, newEntry } from './entry.js';
import { ingressClassMatcher } from './ingress-class.js';
import { writeReport } from '../common/report.js';
import { placeFallbacks, placePaths } from './route-table.js';
import type { RouteTable } from './route-table.js';
import { assignCertificates } from './tls.js';
import { readNginxAnnotations } from './nginx-annotations.js';

/** ingressFragmentGroup is the fragment group shared by every tuna Ingress (see merge.ts). */
export const ingressFragmentGroup = 'ingress';

/**
 * translateIngresses translates every tuna Ingress of the snapshot. Ingresses of other classes are
 * ignored silently (no status: they belong to another controller).
 */
export function translateIngresses(index: SnapshotIndex, options: TranslateOptions): TranslatorOutput {
  return joinIngressParts(translateIngressParts(index, options));
}

/**
 * IngressParts is the Ingress translation cut where it can be spliced: per Ingress (by
 * `namespace/name`) the hosts it touches and its status, per host its nodes and claims. What a
 * host serves depends only on the Ingresses touching it, and an Ingress's status only on its own
 * hosts, so the parts of a set of Ingresses that shares no host with the others equal their share
 * of the whole translation (IncrementalIngresses relies on it).
 */
export interface IngressParts {
  /** per tuna Ingress: its valid hosts, the generated one included (every host its routes, defaultBackend or TLS can take part in) */
  hostsOf: Map<string, string[]>;
  statuses: Map<string, ObjectStatus>;
  hosts: Map<string, IngressGraph>;
  /** the snapshot held one `namespace/name` twice (manifest files): the parts cannot be keyed by it */
  hasDuplicates: boolean;
}

/** translateIngressParts translates the tuna Ingresses of the snapshot into IngressParts. */
export function translateIngressParts(index: SnapshotIndex, options: TranslateOptions): IngressParts {
  const matcher = ingressClassMatcher(index.snapshot.ingressClasses, options);
  const entries: IngressEntry[] = [];
  for (const ingress of index.snapshot.ingresses) {
    const via = matcher.claim(ingress);
    if (via !== undefined) entries.push(newEntry(ingress, via));
  }
  entries.sort(compareEntries);
  const unique = dropDuplicates(entries);
  unique.forEach((e, i) => {
    e.rank = i;
    collectIngress(e, index, options);
    applyNginxAnnotations(e, index);
  });

  const table: RouteTable = new Map();
  placePaths(table, unique);
  placeFallbacks(table, unique);
  assignCertificates(table, unique, index);
  const hosts = buildHostGraphs(table);

  const book = new StatusBook();
  const statuses = new Map<string, ObjectStatus>();
  const hostsOf = new Map<string, string[]>();
  for (const e of unique) {
    statuses.set(e.key, writeStatus(book, e, table));
    hostsOf.set(e.key, e.hosts);
  }
  return { hostsOf, statuses, hosts, hasDuplicates: unique.length < entries.length };
}

/** joinIngressParts is the translator's output of IngressParts: one fragment (when any Ingress is tuna's) and the statuses. */
export function joinIngressParts(parts: IngressParts): TranslatorOutput {
  const { graph, claims } = joinHostGraphs(parts.hosts.values());
  const statuses = [...parts.statuses.values()];
  return { fragments: statuses.length > 0 ? [{ group: ingressFragmentGroup, graph, claims }] : [], statuses };
}

/**
 * ingressHostsOf reads, per tuna Ingress of `ingresses` (by `namespace/name`), the hosts it would
 * touch: what collectIngress finds, without placing anything. Ingresses of other classes are left out.
 */
export function ingressHostsOf(ingresses: readonly V1Ingress[], index: SnapshotIndex, options: TranslateOptions): Map<string, string[]> {
  const matcher = ingressClassMatcher(index.snapshot.ingressClasses, options);
  const out = new Map<string, string[]>();
  for (const ingress of ingresses) {
    const via = matcher.claim(ingress);
    if (via === undefined) continue;
    const entry = newEntry(ingress, via);
    collectIngress(entry, index, options);
    out.set(entry.key, entry.hosts);
  }
  return out;
}

/**
 * applyNginxAnnotations reads the Ingress's ingress-nginx annotations; when one must hold the
 * Ingress back (a snippet, an authentication or IP range that cannot be set up), none of its
 * paths, defaultBackend or TLS entries take part (fail closed), and the reasons are its problems.
 */
function applyNginxAnnotations(e: IngressEntry, index: SnapshotIndex): void {
  const nginx = readNginxAnnotations(e.ingress, index);
  e.nginx = nginx;
  if (nginx.holdBack.length === 0) return;
  e.problems.push(...nginx.holdBack);
  e.paths = [];
  e.fallback = undefined;
  e.tls = [];
}

/**
 * dropDuplicates keeps the first of several Ingresses with one `namespace/name` (entries sorted):
 * only manifest files can hold one object twice, and two would give graph nodes equal ids.
 */
function dropDuplicates(entries: IngressEntry[]): IngressEntry[] {
  const kept = new Map<string, IngressEntry>();
  for (const e of entries) {
    const first = kept.get(e.key);
    if (!first) kept.set(e.key, e);
    else
      first.problems.push({
        condition: 'Accepted',
        reason: 'DuplicateIngress',
        message: `the manifests hold Ingress ${e.key} more than once; only the oldest copy is used`,
      });
  }
  return [...kept.values()];
}

/**
 * writeStatus records the Ingress's status: `status.loadBalancer.ingress` lists each published host
 * by name. Wildcard hosts are published but left out of it: the API server accepts only DNS-1123
 * names there (networking validation, ValidateIngressLoadBalancerStatus).
 */
function writeStatus(book: StatusBook, e: IngressEntry, table: RouteTable): ObjectStatus {
  const status = book.entry(e.ingress, e.ref);
  const hosts = [...e.published].sort();
  const named = hosts.filter((h) => !h.startsWith('*.'));
  status.status = { loadBalancer: named.length > 0 ? { ingress: named.map((hostname) => ({ hostname })) } : {} };
  const published = hosts.flatMap((h) => (table.get(h)?.certificate ? [`http://${h}`, `https://${h}`] : [`http://${h}`]));
  writeReport(status, e.problems, {
    types: ['Accepted', 'ResolvedRefs', 'Conflicted'],
    acceptedMessage: `tuna serves this Ingress (${e.via})`,
    published,
  });
  for (const w of e.nginx?.warnings ?? []) status.events.push(warning(w.reason, w.message));
  return status;
}
