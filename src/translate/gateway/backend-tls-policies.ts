import type { IBackendTLSPolicy } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/BackendTLSPolicy';
import type { Backend, BackendSubjectAltName, BackendTls, Condition, HttpRoute, ObjectStatus, SecretRef, ServiceBackend } from '../../model/index.js';
import { compareStrings, withFilterBackend } from '../../model/index.js';
import { checkCaBundle } from '../common/ca-bundle.js';
import type { SnapshotIndex } from '../common/index-snapshot.js';
import { createdOf, generationOf, namespaceOf } from '../common/meta.js';
import { condition, warning } from '../common/status.js';
import type { GatewayReason } from '../common/reasons.js';
import type { TranslateOptions, TranslateResult } from '../types.js';
import { backendClientCertificates } from './backend-client-certificate.js';
import { backendTlsPolicyCodec, malformedField } from './codecs.js';
import { asKube } from './kube-object.js';
import { GATEWAY_GROUP } from './kinds.js';
import { isGroupKind, isKind } from '../kinds.js';

/** PolicyVerdict is what a BackendTLSPolicy resolves to: the TLS of its targets, or why it cannot be applied. */
interface PolicyVerdict {
  /** set when the policy is usable (some CA resolved, or the system CAs) */
  tls?: Omit<BackendTls, 'clientCertificate'>;
  /** Accepted=False, with this reason, when set */
  notAccepted?: { reason: GatewayReason; message: string };
  /** ResolvedRefs=False, with this reason, when set */
  unresolved?: { reason: GatewayReason; message: string };
}

/** Entry is one BackendTLSPolicy while translating. */
interface Entry {
  obj: IBackendTLSPolicy;
  key: string;
  namespace: string;
  created: string;
  verdict: PolicyVerdict;
  /** the targets (`ns/service/section`, section '' for the whole Service) it lost to an older policy */
  conflicted: Set<string>;
  /** the Gateways (`ns/name`) whose routes use a target of the policy, with whether the target used there is conflicted */
  ancestors: Map<string, boolean>;
}

/**
 * applyBackendTlsPolicies applies BackendTLSPolicies (GEP-1897, gateway.networking.k8s.io/v1) to
 * the Service backends of the Gateway API routes in the graph, and writes each policy's
 * `status.ancestors`: one entry per Gateway whose routes use a target. A policy targets a Service
 * (and with `sectionName`, one port by name); of two policies on the same target and section the
 * older one wins (then `namespace/name` order) and the other is `Accepted=False Conflicted`
 * (GEP-713); a section's policy wins over the whole Service's. A backend whose policy has no usable
 * CA answers 500 (as an invalid backendRef) rather than speak plain text (the spec: "Connections using an invalid
 * CACertificateRef MUST fail"). The Gateway's `spec.tls.backend.clientCertificateRef` is named on
 * the TLS backends of its routes (backend-client-certificate.ts).
 */
export function applyBackendTlsPolicies(index: SnapshotIndex, opts: TranslateOptions, result: TranslateResult): TranslateResult {
  const clientCerts = backendClientCertificates(index, result);
  const policies = index.snapshot.backendTlsPolicies;
  if (policies.length === 0) return result;
  const entries = policies.map((obj) => entryOf(index, obj)).sort(byAge);
  const winners = new Map<string, Entry>();
  for (const e of entries)
    for (const target of targetsOf(e)) {
      if (winners.has(target)) e.conflicted.add(target);
      else winners.set(target, e);
    }
  // by binding, not by the listener's own source: a ListenerSet's listeners serve on its Gateway's binding
  const gatewayOfBinding = new Map(result.graph.bindings.filter((b) => isKind(b.source, 'Gateway')).map((b) => [b.id, `${b.source.namespace ?? ''}/${b.source.name}`]));
  const gatewayOfListener = new Map(result.graph.listeners.flatMap((l) => (gatewayOfBinding.has(l.bindingId) ? [[l.id, gatewayOfBinding.get(l.bindingId) ?? '']] : [])));
  for (const v of result.graph.virtualHosts) {
    const gateway = gatewayOfListener.get(v.listenerId);
    if (gateway === undefined) continue;
    const clientCertificate = clientCerts.get(gateway);
    for (const r of v.routes) {
      if (!isKind(r.source, 'HTTPRoute') && !isKind(r.source, 'GRPCRoute')) continue;
      const place = (b: ServiceBackend): Backend => placePolicy(b, winners, entries, gateway, clientCertificate);
      r.backends = r.backends.map((b) => (b.kind === 'service' ? place(b) : b));
      r.filters = filterBackendsWithTls(r, place);
    }
  }
  const statuses = [...result.statuses, ...entries.map((e) => statusOf(e, opts))];
  return { graph: result.graph, statuses };
}

/** placePolicy gives a backend the TLS of the policy that wins for its port, or 500 (as an invalid backendRef) when that policy has no usable CA. */
function placePolicy(b: ServiceBackend, winners: Map<string, Entry>, entries: Entry[], gateway: string, clientCertificate: SecretRef | undefined): Backend {
  const section = winners.get(`${b.namespace}/${b.service}/${b.portName}`);
  const whole = winners.get(`${b.namespace}/${b.service}/`);
  const winner = (b.portName !== '' ? section : undefined) ?? whole;
  // every policy on this port's targets (the losers too) reports the Gateway as its ancestor
  for (const e of entries)
    for (const t of [`${b.namespace}/${b.service}/${b.portName}`, `${b.namespace}/${b.service}/`])
      if (targetsOf(e).includes(t) && (t.endsWith('/') || b.portName !== '')) e.ancestors.set(gateway, (e.ancestors.get(gateway) ?? false) || e.conflicted.has(t));
  if (!winner) return b;
  if (!winner.verdict.tls) return { kind: 'unavailable', weight: b.weight, statusCode: 500, reason: 'NoValidCACertificate' };
  const tls: BackendTls = { ...winner.verdict.tls, ...(clientCertificate ? { clientCertificate } : {}) };
  return { ...b, tls };
}

/**
 * filterBackendsWithTls applies policies to the Services filters send to as well: a mirror whose
 * policy has no usable CA is dropped (never sent in plain text); an external authorization whose
 * policy has none answers 500 instead, as its invalid backendRef would (never skipped: that would let
 * every request through).
 */
function filterBackendsWithTls(r: HttpRoute, place: (b: ServiceBackend) => Backend): HttpRoute['filters'] {
  const out: HttpRoute['filters'] = [];
  for (const f of r.filters) {
    if (f.type !== 'RequestMirror' && f.type !== 'ExternalAuth') {
      out.push(f);
      continue;
    }
    const placed = place(f.backend);
    if (placed.kind === 'service') out.push(withFilterBackend(f, placed));
    else if (f.type === 'ExternalAuth') out.push({ type: 'DirectResponse', statusCode: 500 });
  }
  return out;
}

function byAge(a: Entry, b: Entry): number {
  if (a.created !== b.created) return a.created === '' ? 1 : b.created === '' ? -1 : compareStrings(a.created, b.created);
  return compareStrings(a.key, b.key);
}

/** targetsOf lists a policy's targets as `ns/service/section` (core Services only; other kinds are not BackendTLSPolicy targets tuna knows). */
function targetsOf(e: Entry): string[] {
  const refs = e.obj.spec?.targetRefs ?? [];
  return refs.filter((t) => isGroupKind(t, 'Service')).map((t) => `${e.namespace}/${t.name}/${t.sectionName ?? ''}`);
}

function entryOf(index: SnapshotIndex, obj: IBackendTLSPolicy): Entry {
  const kube = asKube(obj);
  const namespace = namespaceOf(kube);
  const key = `${namespace}/${kube.metadata?.name ?? ''}`;
  const malformed = malformedField(backendTlsPolicyCodec, obj);
  const verdict: PolicyVerdict = malformed ? { notAccepted: { reason: 'Invalid', message: `malformed ${malformed}` } } : resolveValidation(index, namespace, obj);
  return { obj, key, namespace, created: createdOf(kube), verdict, conflicted: new Set(), ancestors: new Map() };
}

/** resolveValidation reads `spec.validation`: the CA (ConfigMaps' ca.crt, or System), the hostname and the subjectAltNames. */
function resolveValidation(index: SnapshotIndex, namespace: string, obj: IBackendTLSPolicy): PolicyVerdict {
  const v = obj.spec.validation;
  const refs = v.caCertificateRefs ?? [];
  const wellKnown = v.wellKnownCACertificates ?? '';
  const sans = subjectAltNamesOf(v.subjectAltNames ?? []);
  if (typeof sans === 'string') return { notAccepted: { reason: 'Invalid', message: sans } };
  const base = { serverName: v.hostname, ...(sans.length > 0 ? { subjectAltNames: sans } : {}) };
  if (refs.length > 0 && wellKnown !== '') return { notAccepted: { reason: 'Invalid', message: 'caCertificateRefs and wellKnownCACertificates are both set; only one may be' } };
  if (refs.length === 0) {
    if (wellKnown === 'System') return { tls: { ...base, ca: { kind: 'system' } } };
    const message = wellKnown === '' ? 'neither caCertificateRefs nor wellKnownCACertificates is set' : `wellKnownCACertificates ${wellKnown} is not supported; tuna supports System`;
    return { notAccepted: { reason: 'Invalid', message } };
  }
  const pems: string[] = [];
  const problems: { reason: GatewayReason; message: string }[] = [];
  for (const ref of refs) {
    const what = `caCertificateRef ${ref.kind} ${ref.name}`;
    if (!isGroupKind(ref, 'ConfigMap')) {
      problems.push({ reason: 'InvalidKind', message: `${what}${ref.group ? ` (group ${ref.group})` : ''} is not a core ConfigMap, the only kind tuna reads CA certificates from` });
      continue;
    }
    const cm = index.snapshot.configMaps.find((c) => c.metadata?.namespace === namespace && c.metadata?.name === ref.name);
    const bundle = cm?.data?.['ca.crt'];
    const problem = !cm ? 'does not exist' : bundle === undefined ? 'has no key ca.crt' : checkCaBundle(bundle);
    if (problem !== undefined || bundle === undefined) problems.push({ reason: 'InvalidCACertificateRef', message: `${what} ${problem ?? ''}` });
    else pems.push(bundle.trim());
  }
  const unresolved = problems[0] ? { reason: problems[0].reason, message: problems.map((p) => p.message).join('; ') } : undefined;
  if (pems.length === 0) return { notAccepted: { reason: 'NoValidCACertificate', message: `no caCertificateRef is valid: ${unresolved?.message ?? ''}` }, ...(unresolved ? { unresolved } : {}) };
  return { tls: { ...base, ca: { kind: 'pem', pem: `${pems.join('\n')}\n` } }, ...(unresolved ? { unresolved } : {}) };
}

/** subjectAltNamesOf reads `subjectAltNames` (Hostname and URI types), or says what is wrong. */
function subjectAltNamesOf(list: readonly { type: string; hostname?: string; uri?: string }[]): BackendSubjectAltName[] | string {
  const out: BackendSubjectAltName[] = [];
  for (const [i, n] of list.entries()) {
    if (n.type === 'Hostname' && n.hostname) out.push({ type: 'Hostname', value: n.hostname });
    else if (n.type === 'URI' && n.uri) out.push({ type: 'URI', value: n.uri });
    else return `subjectAltNames[${i}]: type ${n.type} needs its ${n.type === 'URI' ? 'uri' : 'hostname'} (types: Hostname, URI)`;
  }
  return out;
}

/** statusOf writes `status.ancestors`: per Gateway, Accepted and ResolvedRefs of the policy there. */
function statusOf(e: Entry, opts: TranslateOptions): ObjectStatus {
  const gen = generationOf(asKube(e.obj));
  const v = e.verdict;
  const ancestors = [...e.ancestors.entries()]
    .sort(([a], [b]) => compareStrings(a, b))
    .map(([gateway, isConflicted]) => {
      const [namespace, name] = gateway.split('/') as [string, string];
      const accepted: Condition = isConflicted
        ? condition('Accepted', false, 'Conflicted', 'an older BackendTLSPolicy targets the same Service and section', gen)
        : v.notAccepted
          ? condition('Accepted', false, v.notAccepted.reason, v.notAccepted.message, gen)
          : condition('Accepted', true, 'Accepted', 'the policy is applied to the backends of this Gateway\'s routes', gen);
      const resolved = v.unresolved ? condition('ResolvedRefs', false, v.unresolved.reason, v.unresolved.message, gen) : condition('ResolvedRefs', true, 'ResolvedRefs', 'all references are resolved', gen);
      return { ancestorRef: { group: GATEWAY_GROUP, kind: 'Gateway', namespace, name }, controllerName: opts.gatewayControllerName, conditions: [accepted, resolved] };
    });
  const problems = [...(v.notAccepted ? [v.notAccepted] : []), ...(v.unresolved ? [v.unresolved] : [])];
  return {
    ref: { group: GATEWAY_GROUP, kind: 'BackendTLSPolicy', namespace: e.namespace, name: e.obj.metadata?.name ?? '' },
    ...(gen !== undefined ? { observedGeneration: gen } : {}),
    conditions: [],
    status: { ancestors },
    events: problems.map((p) => warning(p.reason, p.message)),
  };
}
