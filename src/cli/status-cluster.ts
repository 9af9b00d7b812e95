import { X509Certificate } from 'node:crypto';
import type { Binding, RouteGraph, SecretRef, SourceRef } from '../model/index.js';
import { snapshotFromObjects, translateSnapshot } from '../translate/index.js';
import { sortBindings } from './status-report.js';
import type { StatusBinding, StatusReport } from './status-report.js';

/**
 * The cluster's view of `tuna status` (the operator's): the objects the operator watches, read
 * once, translated as the operator translates them into bindings (which object each came from),
 * and what the operator wrote back: the conditions on those objects that are not as they should
 * be (held back: `Programmed=False AddressNotAssigned`, `Published=False`, `Ready=False` …), the
 * newest Warning event it recorded on them, and the expiry of the in-cluster TLS certificates
 * their listeners name. The live tunnels are not in the cluster's objects (tuna status --edge).
 */

/** ClusterObject is a Kubernetes object as listed (plain JSON, apiVersion and kind set). */
export type ClusterObject = { apiVersion?: string; kind?: string; metadata?: { name?: string; namespace?: string; uid?: string }; status?: unknown; [k: string]: unknown };

/** ClusterEvent is the part of a core/v1 Event this view reads. */
export interface ClusterEvent {
  type?: string;
  reason?: string;
  message?: string;
  involvedObject?: { kind?: string; namespace?: string; name?: string };
  reportingComponent?: string;
  source?: { component?: string };
  lastTimestamp?: string | Date;
  eventTime?: string | Date;
}

/** ClusterStatusInputs are what the cluster view is built from (collectClusterStatus reads them). */
export interface ClusterStatusInputs {
  readonly source: string;
  readonly objects: readonly ClusterObject[];
  readonly events: readonly ClusterEvent[];
  /** PEM `tls.crt` of the Secrets listeners name (`namespace/name`), where they could be read */
  readonly certificates: ReadonlyMap<string, string>;
  /** the edge's base domain, for the hostnames tuna generates (`<name>-<namespace>.<baseDomain>`) */
  readonly baseDomain?: string;
  readonly notes?: readonly string[];
}

/** OPERATOR_COMPONENT is the event source the operator writes (src/operator/event-recorder.ts). */
export const OPERATOR_COMPONENT = 'tuna-operator';

/**
 * NEGATIVE_CONDITIONS are condition types whose True is the problem (Gateway API:
 * ListenerConditionConflicted, RouteConditionPartiallyInvalid, ListenerConditionOverlappingTLSConfig).
 */
const NEGATIVE_CONDITIONS: ReadonlySet<string> = new Set(['Conflicted', 'PartiallyInvalid', 'OverlappingTLSConfig']);

/** buildClusterStatus is the cluster view of already-read objects. */
export function buildClusterStatus(inputs: ClusterStatusInputs): StatusReport {
  const { snapshot } = snapshotFromObjects([...inputs.objects]);
  const { graph } = translateSnapshot(snapshot, inputs.baseDomain !== undefined ? { baseDomain: inputs.baseDomain } : {});
  const byRef = new Map(inputs.objects.map((o) => [objectKey(o.kind ?? '', o.metadata?.namespace, o.metadata?.name ?? ''), o]));
  const warnings = newestWarnings(inputs.events);
  const bindings = graph.bindings.map((b): StatusBinding => {
    const sources = sourcesOf(graph, b);
    const objects = sources.map((s) => byRef.get(objectKey(s.kind, s.namespace, s.name))).filter((o): o is ClusterObject => o !== undefined);
    const expiries = certificatesOf(graph, b).flatMap((ref) => {
      const pem = inputs.certificates.get(`${ref.namespace}/${ref.name}`);
      const at = pem === undefined ? undefined : notAfter(pem);
      return at === undefined ? [] : [at];
    });
    const errors = sources.map((s) => warnings.get(objectKey(s.kind, s.namespace, s.name))).filter((e): e is { at: number; text: string } => e !== undefined);
    const last = errors.sort((x, y) => y.at - x.at)[0];
    return {
      id: b.id,
      kind: b.transport === 'udp' ? 'udp-port' : b.kind,
      addresses: addressesOf(graph, b, objects),
      from: sources.map(describeRef),
      tunnels: null,
      edges: [],
      heldBack: objects.flatMap(problemsOf),
      certificateExpiresAt: expiries.length === 0 ? null : Math.min(...expiries),
      keyExpiresAt: null,
      lastError: last?.text ?? null,
    };
  });
  const notes = [...(inputs.notes ?? []), 'tunnel connections are not in the cluster\'s objects: tuna status --edge shows them'];
  return { view: 'cluster', source: inputs.source, bindings: sortBindings(bindings), notes };
}

/** sourcesOf lists the objects a binding came from: its own source, then its listeners' and routes' (Ingresses merged on a host, HTTPRoutes on a Gateway). */
function sourcesOf(graph: RouteGraph, b: Binding): SourceRef[] {
  const listeners = graph.listeners.filter((l) => l.bindingId === b.id);
  const listenerIds = new Set(listeners.map((l) => l.id));
  const routes = graph.virtualHosts.filter((v) => listenerIds.has(v.listenerId)).flatMap((v) => v.routes.map((r) => r.source));
  const streams = graph.streamRoutes.filter((r) => listenerIds.has(r.listenerId)).map((r) => r.source);
  const seen = new Map<string, SourceRef>();
  for (const s of [b.source, ...listeners.map((l) => l.source), ...routes, ...streams]) {
    const key = objectKey(s.kind, s.namespace, s.name);
    if (!seen.has(key)) seen.set(key, s);
  }
  return [...seen.values()];
}

/** certificatesOf lists the Secrets the binding's in-cluster TLS listeners name. */
function certificatesOf(graph: RouteGraph, b: Binding): SecretRef[] {
  return graph.listeners.filter((l) => l.bindingId === b.id && l.tls?.mode === 'terminate-in-cluster').flatMap((l) => l.tls?.certificates ?? []);
}

/**
 * addressesOf names the public addresses: the hostnames a binding claims; for ports and addresses what the
 * operator wrote (a Service's `status.loadBalancer` ports, a Gateway's `status.addresses` with its
 * listeners' ports), or the port asked for until the edge assigned one.
 */
function addressesOf(graph: RouteGraph, b: Binding, objects: readonly ClusterObject[]): string[] {
  if (b.kind === 'host') return [...b.hostnames];
  const owner = objects.find((o) => o.kind === b.source.kind && o.metadata?.name === b.source.name && o.metadata?.namespace === b.source.namespace);
  const status = (owner?.status ?? {}) as { loadBalancer?: { ingress?: { ip?: string; hostname?: string; ports?: { port?: number; protocol?: string }[] }[] }; addresses?: { value?: string }[]; port?: number; address?: string };
  if (b.kind === 'address') {
    const ips = (status.addresses ?? []).map((a) => a.value).filter((v): v is string => v !== undefined);
    const ports = [...new Set(graph.listeners.filter((l) => l.bindingId === b.id).map((l) => `${l.port}/${l.protocol}`))];
    // hostnames of its routes claimed on the edge's shared listeners, then its own address's ports
    return [...b.hostnames, ...(ips.length === 0 ? ports.map((p) => `(unassigned):${p}`) : ips.flatMap((ip) => ports.map((p) => `${ip}:${p}`)))];
  }
  const written = (status.loadBalancer?.ingress ?? []).flatMap((i) => (i.ports ?? []).map((p) => `${i.ip ?? i.hostname ?? ''}:${p.port ?? ''}/${(p.protocol ?? 'TCP').toLowerCase()}`));
  if (written.length > 0) return written;
  if (status.port !== undefined) return [`${status.address ?? ''}:${status.port}`];
  return [b.port === undefined || b.port === 0 ? '(any port, unassigned)' : `(unassigned):${b.port}`];
}

/** problemsOf reads the conditions of an object, its Gateway listeners and its tuna route parents that are not as they should be. */
function problemsOf(o: ClusterObject): string[] {
  const status = (o.status ?? {}) as {
    conditions?: Condition[];
    listeners?: { name?: string; conditions?: Condition[] }[];
    parents?: { controllerName?: string; parentRef?: { name?: string; sectionName?: string }; conditions?: Condition[] }[];
  };
  const what = describeObject(o);
  const bad = (c: Condition): boolean => (NEGATIVE_CONDITIONS.has(c.type ?? '') ? c.status === 'True' : c.status !== 'True');
  const line = (where: string, c: Condition): string => `${where}: ${c.type ?? '?'}=${c.status ?? '?'} ${c.reason ?? ''}${c.message ? `: ${c.message}` : ''}`;
  return [
    ...(status.conditions ?? []).filter(bad).map((c) => line(what, c)),
    ...(status.listeners ?? []).flatMap((l) => (l.conditions ?? []).filter(bad).map((c) => line(`${what} listener ${l.name ?? '?'}`, c))),
    ...(status.parents ?? [])
      .filter((p) => p.controllerName?.startsWith('tuna.dev/') === true)
      .flatMap((p) => (p.conditions ?? []).filter(bad).map((c) => line(`${what} parent ${p.parentRef?.name ?? '?'}${p.parentRef?.sectionName ? `/${p.parentRef.sectionName}` : ''}`, c))),
  ];
}

interface Condition {
  type?: string;
  status?: string;
  reason?: string;
  message?: string;
}

/** newestWarnings keeps, per involved object, the newest Warning the operator recorded on it. */
function newestWarnings(events: readonly ClusterEvent[]): Map<string, { at: number; text: string }> {
  const out = new Map<string, { at: number; text: string }>();
  for (const e of events) {
    if (e.type !== 'Warning' || (e.reportingComponent ?? e.source?.component) !== OPERATOR_COMPONENT) continue;
    const key = objectKey(e.involvedObject?.kind ?? '', e.involvedObject?.namespace, e.involvedObject?.name ?? '');
    const at = new Date(e.lastTimestamp ?? e.eventTime ?? 0).getTime();
    const prev = out.get(key);
    if (prev === undefined || at >= prev.at) out.set(key, { at, text: `${e.reason ?? ''}: ${e.message ?? ''}` });
  }
  return out;
}

/** notAfter reads the first certificate of a PEM bundle's expiry (epoch ms), undefined when it does not parse. */
export function notAfter(pem: string): number | undefined {
  try {
    return new X509Certificate(pem).validToDate.getTime();
  } catch {
    return undefined;
  }
}

function objectKey(kind: string, namespace: string | undefined, name: string): string {
  return `${kind}/${namespace ?? ''}/${name}`;
}

/** describeRef names an object as `Kind/namespace/name` (`Kind/name` for a cluster-scoped one): one word, for awk. */
function describeRef(s: SourceRef): string {
  return `${s.kind}/${s.namespace !== undefined ? `${s.namespace}/` : ''}${s.name}`;
}

function describeObject(o: ClusterObject): string {
  return `${o.kind ?? '?'}/${o.metadata?.namespace !== undefined ? `${o.metadata.namespace}/` : ''}${o.metadata?.name ?? '?'}`;
}
