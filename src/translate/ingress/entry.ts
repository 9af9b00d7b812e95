import type { V1Ingress } from '@kubernetes/client-node';
import type { ObjectRef, PathMatch, ServiceBackend } from '../../model/index.js';
import { compareStrings, stableStringify } from '../../model/index.js';
import { createdOf, namespaceOf } from '../common/meta.js';
import type { Problem } from '../common/report.js';
import type { NginxAnnotations } from './nginx-annotations.js';

/** IngressEntry is one tuna Ingress while it is translated: what it asks for and what went wrong. */
export interface IngressEntry {
  ingress: V1Ingress;
  ref: ObjectRef;
  namespace: string;
  /** `<namespace>/<name>` */
  key: string;
  /** creation timestamp (RFC 3339), '' when unknown */
  created: string;
  /** position in precedence order: 0 is the oldest Ingress */
  rank: number;
  /** why tuna serves it (class name, IngressClass, annotation or default class) */
  via: string;
  /** its valid hosts in spec order, the generated one included */
  hosts: string[];
  paths: PathCandidate[];
  /** the resolved `spec.defaultBackend`, when it has one that resolves */
  fallback?: ServiceBackend;
  tls: TlsRequest[];
  problems: Problem[];
  /** hosts where at least one of its routes reached the graph */
  published: Set<string>;
  /** what its ingress-nginx annotations ask for (read after collectIngress) */
  nginx?: NginxAnnotations;
}

/** PathCandidate is one valid rule path with a resolved backend, not yet checked for conflicts. */
export interface PathCandidate {
  owner: IngressEntry;
  host: string;
  rule: number;
  path: number;
  match: PathMatch;
  backend: ServiceBackend;
  /** `spec.rules[0].http.paths[1] (a.example.com Prefix /api)`, for messages */
  label: string;
}

/** TlsRequest is one `spec.tls` entry, hosts normalised. */
export interface TlsRequest {
  index: number;
  secretName: string;
  hosts: string[];
}

/** newEntry starts the translation record of an Ingress (rank is set once all are sorted). */
export function newEntry(ingress: V1Ingress, via: string): IngressEntry {
  const namespace = namespaceOf(ingress);
  const name = ingress.metadata?.name ?? '';
  return {
    ingress,
    ref: { group: 'networking.k8s.io', kind: 'Ingress', namespace, name },
    namespace,
    key: `${namespace}/${name}`,
    created: createdOf(ingress),
    rank: 0,
    via,
    hosts: [],
    paths: [],
    tls: [],
    problems: [],
    published: new Set(),
  };
}

/**
 * compareEntries orders Ingresses by precedence: the oldest first (creationTimestamp; unknown
 * last), then by `namespace/name`. It decides every conflict between Ingresses, so it must be total.
 */
export function compareEntries(a: IngressEntry, b: IngressEntry): number {
  if (a.created !== b.created) {
    if (a.created === '') return 1;
    if (b.created === '') return -1;
    return compareStrings(a.created, b.created);
  }
  // Equal keys happen only when manifest files hold one Ingress twice; their content decides.
  return compareStrings(a.key, b.key) || compareStrings(stableStringify(a.ingress), stableStringify(b.ingress));
}

/** whyFirst says, for a message, why `winner` takes precedence over `loser`. */
export function whyFirst(winner: IngressEntry, loser: IngressEntry): string {
  if (winner === loser) return 'it comes first in this Ingress';
  if (loser.created === '') return 'it has a creationTimestamp and this Ingress has none';
  if (winner.created !== loser.created) return 'it is older';
  return `it was created at the same time and ${winner.key} sorts before ${loser.key}`;
}
