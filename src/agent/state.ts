import type { V1EndpointSlice } from '@kubernetes/client-node';
import type { CertificatePair, Endpoint } from '../dataplane/index.js';
import { endpointsFromSlices } from '../dataplane/index.js';
import type { ObjectStatus, RouteGraph } from '../model/index.js';
import { snapshotFromObjects, translateSnapshot } from '../translate/index.js';
import type { IncrementalTranslation, TranslateOptions } from '../translate/index.js';
import { isKind } from '../translate/index.js';

/**
 * The agent's pipeline from Kubernetes objects to what it serves: objects (from an API server's
 * cache or from manifest files) → snapshot → translators → route graph and statuses, plus the
 * endpoints (EndpointSlices) and certificates (`kubernetes.io/tls` Secrets) the data plane needs.
 * The operator and `tuna run` both go through it, so a file and a cluster translate alike.
 */

/** AgentState is everything the agent serves from one set of objects. */
export interface AgentState {
  graph: RouteGraph;
  statuses: ObjectStatus[];
  endpoints: Map<string, Map<string, Endpoint[]>>;
  certificates: Map<string, CertificatePair>;
  /** objects of kinds tuna does not read */
  ignored: number;
}

/**
 * translateObjects translates a set of objects: the same for a cluster and for manifest files.
 * Given an IncrementalTranslation (made with the same options), it translates through it: the same
 * result, with only what changed since its last call translated again.
 */
export function translateObjects(objects: unknown[], options: Partial<TranslateOptions> = {}, incremental?: IncrementalTranslation): AgentState {
  const { snapshot, ignored } = snapshotFromObjects(normalizeTimestamps(objects));
  const result = incremental ? incremental.translate(snapshot) : translateSnapshot(snapshot, options);
  return {
    graph: result.graph,
    statuses: result.statuses,
    endpoints: endpointsFromSlices(snapshot.endpointSlices as V1EndpointSlice[]),
    certificates: tlsPairsOf(objects),
    ignored: ignored.length,
  };
}

/**
 * normalizeTimestamps turns YAML timestamps into RFC 3339 strings: the yaml parser may yield Date
 * objects for unquoted `creationTimestamp`, while translators compare strings.
 */
function normalizeTimestamps(objects: unknown[]): unknown[] {
  return objects.map((o) => {
    const meta = (o as { metadata?: { creationTimestamp?: unknown } } | null)?.metadata;
    if (meta && meta.creationTimestamp instanceof Date) meta.creationTimestamp = meta.creationTimestamp.toISOString().replace('.000Z', 'Z');
    return o;
  });
}

/** tlsPairsOf extracts `kubernetes.io/tls` Secrets (`data` base64 or `stringData`) by namespace/name. */
function tlsPairsOf(objects: unknown[]): Map<string, CertificatePair> {
  const out = new Map<string, CertificatePair>();
  for (const o of objects) {
    const s = o as { apiVersion?: string; kind?: string; type?: string; metadata?: { name?: string; namespace?: string }; data?: Record<string, string>; stringData?: Record<string, string> };
    if (!isKind(s, 'Secret') || s.apiVersion !== 'v1' || s.type !== 'kubernetes.io/tls' || !s.metadata?.name) continue;
    const cert = s.stringData?.['tls.crt'] ?? decode(s.data?.['tls.crt']);
    const key = s.stringData?.['tls.key'] ?? decode(s.data?.['tls.key']);
    if (cert && key) out.set(`${s.metadata.namespace ?? 'default'}/${s.metadata.name}`, { cert, key });
  }
  return out;
}

function decode(b64: string | undefined): string | undefined {
  return b64 === undefined ? undefined : Buffer.from(b64, 'base64').toString('utf8');
}

