import type { IListener } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/Listener';
import type { Listener, ListenerProtocol, SecretRef } from '../../model/index.js';
import { sourceOf } from '../common/meta.js';
import type { GatewayContext, ListenerContext, ListenerOwner, Problem, TranslationContext } from './context.js';
import { supportsFeature } from './features.js';
import { resolveClientValidation } from './frontend-validation.js';
import { isAcceptableHostname } from './hostnames.js';
import { GATEWAY_GROUP, isRouteKind, kindsForProtocol } from './kinds.js';
import type { RouteKind } from './kinds.js';
import { matchesLabelSelector } from './namespace-selector.js';
import { refersTo } from '../kinds.js';

/**
 * buildListeners checks every listener of a Gateway (protocol, hostname, TLS and its certificate
 * references, allowed route kinds and namespaces), marks listeners that are not distinct on their
 * port (Gateway API v1.6 "Handling indistinct Listeners": none of them is accepted), and gives each
 * listener that passes everything its graph Listener.
 */
export function buildListeners(ctx: TranslationContext, gw: GatewayContext): ListenerContext[] {
  const seen = new Set<string>();
  const owner: ListenerOwner = { kind: 'Gateway', namespace: gw.namespace, ref: gw.ref };
  const listeners = (gw.obj.spec?.listeners ?? []).map((spec) => {
    const l = checkListener(ctx, gw, owner, spec);
    if (seen.has(l.name)) l.notAccepted ??= { reason: 'UnsupportedValue', message: `listener name ${l.name} is used twice` };
    seen.add(l.name);
    return l;
  });
  markConflicts(listeners);
  for (const l of listeners) {
    if (!l.notAccepted && !l.unresolved && !l.conflict) l.graph = graphListener(gw, l);
  }
  return listeners;
}

/**
 * checkListener checks one listener of a Gateway or a ListenerSet on its own (conflicts are the
 * caller's). `gw` is the Gateway either belongs to: its `spec.tls.frontend` validates the clients
 * of every HTTPS listener on the port, a ListenerSet's too, since they share the port's connections.
 */
export function checkListener(ctx: TranslationContext, gw: GatewayContext, owner: ListenerOwner, spec: IListener): ListenerContext {
  const protocol = spec.protocol;
  const l: ListenerContext = {
    spec,
    owner,
    name: spec.name,
    port: spec.port,
    protocol,
    // Gateway API Listener.hostname: "ignored for protocols that don't require hostname based matching" (TCP, UDP)
    ...(spec.hostname && protocol !== 'TCP' && protocol !== 'UDP' ? { hostname: spec.hostname } : {}),
    kinds: [],
    attached: new Set(),
    admitsNamespace: namespaceFilter(ctx, owner.namespace, spec),
  };
  const supported = kindsForProtocol(protocol);
  if (supported.length === 0) {
    l.notAccepted = { reason: 'UnsupportedProtocol', message: `protocol ${protocol} is not supported by tuna` };
    return l;
  }
  l.kinds = allowedKinds(spec, supported, l);
  if (!Number.isInteger(spec.port) || spec.port < 1 || spec.port > 65535)
    l.notAccepted = { reason: 'UnsupportedValue', message: `port ${String(spec.port)} is not a valid port` };
  else if (l.hostname !== undefined && !isAcceptableHostname(l.hostname))
    l.notAccepted = { reason: 'UnsupportedValue', message: `hostname ${l.hostname} is not a DNS name (IP addresses are not allowed)` };
  else if (!isAllowedNamespacesValid(spec))
    l.notAccepted = { reason: 'UnsupportedValue', message: `allowedRoutes.namespaces.from ${String(spec.allowedRoutes?.namespaces?.from)} is not supported` };
  else if (protocol === 'HTTPS' && (spec.tls?.mode ?? 'Terminate') !== 'Terminate')
    l.notAccepted = { reason: 'UnsupportedValue', message: 'HTTPS listeners terminate TLS; use protocol TLS for Passthrough' };
  else if ((protocol === 'HTTPS' || protocol === 'TLS') && !['Terminate', 'Passthrough'].includes(spec.tls?.mode ?? 'Terminate'))
    l.notAccepted = { reason: 'UnsupportedValue', message: `TLS mode ${String(spec.tls?.mode)} is not supported` };
  if (!l.notAccepted && protocol === 'TLS' && (spec.tls?.mode ?? 'Terminate') === 'Terminate' && !supportsFeature('TLSRouteModeTerminate'))
    l.notAccepted = { reason: 'UnsupportedValue', message: 'TLS listeners in Terminate mode are not supported' };
  if (!l.notAccepted && (protocol === 'HTTPS' || protocol === 'TLS')) {
    if (spec.tls?.mode === 'Passthrough') l.tls = { mode: 'passthrough', certificates: [] };
    else {
      // The operator terminates TLS in the cluster; the edge only routes the raw stream by SNI.
      const certs = resolveCertificates(ctx, owner, l);
      if (Array.isArray(certs)) l.tls = { mode: 'terminate-in-cluster', certificates: certs };
      else l.unresolved = certs;
      applyClientValidation(ctx, gw, l);
    }
  }
  return l;
}

/** applyClientValidation adds the Gateway's frontend validation for the listener's port (frontend-validation.ts). */
function applyClientValidation(ctx: TranslationContext, gw: GatewayContext, l: ListenerContext): void {
  const verdict = resolveClientValidation(ctx, gw, l);
  if (verdict.kind === 'valid' && l.tls) l.tls = { ...l.tls, clientValidation: verdict.validation };
  if (verdict.kind !== 'invalid') return;
  // A certificateRef problem found first keeps its ResolvedRefs reason; both refuse the listener.
  if (verdict.unresolved) l.unresolved ??= verdict.unresolved;
  if (verdict.notAccepted) l.notAccepted = verdict.notAccepted;
}

/** allowedKinds filters allowedRoutes.kinds to those the protocol serves; any other is InvalidRouteKinds. */
function allowedKinds(spec: IListener, supported: RouteKind[], l: ListenerContext): RouteKind[] {
  const asked = spec.allowedRoutes?.kinds;
  // "When unspecified or empty, the kinds of Routes selected are determined using the Listener protocol."
  if (asked === undefined || asked.length === 0) return supported;
  const kinds: RouteKind[] = [];
  const invalid: string[] = [];
  for (const k of asked) {
    const group = k.group ?? GATEWAY_GROUP;
    if (group === GATEWAY_GROUP && isRouteKind(k.kind) && supported.includes(k.kind)) {
      if (!kinds.includes(k.kind)) kinds.push(k.kind);
    } else invalid.push(`${group}/${k.kind}`);
  }
  if (invalid.length > 0)
    l.unresolved = {
      reason: 'InvalidRouteKinds',
      message: `route kind(s) ${invalid.join(', ')} cannot attach to a ${spec.protocol} listener`,
    };
  return kinds;
}

function isAllowedNamespacesValid(spec: IListener): boolean {
  const ns = spec.allowedRoutes?.namespaces;
  const from = ns?.from ?? 'Same';
  if (from === 'Selector') return ns?.selector !== undefined;
  return from === 'Same' || from === 'All' || from === 'None';
}

/** namespaceFilter implements allowedRoutes.namespaces (From Same, All, Selector, None). */
function namespaceFilter(ctx: TranslationContext, ownNamespace: string, spec: IListener): (ns: string) => boolean {
  const rule = spec.allowedRoutes?.namespaces;
  switch (rule?.from ?? 'Same') {
    case 'All':
      return () => true;
    case 'Same':
      return (ns) => ns === ownNamespace;
    case 'Selector': {
      const selector = rule?.selector;
      if (!selector) return () => false;
      return (ns) => {
        // The API server labels every namespace with its name (kubernetes.io/metadata.name).
        const labels = { ...(ctx.index.namespaces.get(ns)?.metadata?.labels ?? {}), 'kubernetes.io/metadata.name': ns };
        return matchesLabelSelector(selector, labels);
      };
    }
    default:
      return () => false;
  }
}

/**
 * markConflicts applies the distinctness rules: listeners of different protocol families
 * (HTTP; TLS termination — HTTPS and TLS Terminate; TLS passthrough; TCP) on one port are all
 * ProtocolConflict (TLSRouteModeMixed lifts the split between the two TLS families); listeners of
 * one family on one port with the same hostname (TCP, UDP: any two) are all HostnameConflict, also
 * when only their TLS modes differ ("the `tls` field is not used for determining if a listener is
 * distinct": the data plane picks a TLS stream's listener by SNI alone). UDP listeners share a port
 * number only with each other (transportOf).
 */
function markConflicts(listeners: ListenerContext[]): void {
  const byPort = new Map<string, ListenerContext[]>();
  for (const l of listeners) {
    // A listener refused for its own spec takes no port, so it cannot conflict with another one.
    if (l.notAccepted) continue;
    const key = `${transportOf(l)}/${l.port}`;
    byPort.set(key, [...(byPort.get(key) ?? []), l]);
  }
  for (const group of byPort.values()) {
    const port = group[0]!.port;
    const families = new Set(group.map(familyOf));
    if (families.size > 1) {
      const message = `port ${port} is used by listeners of incompatible protocols (${group.map((l) => `${l.name}: ${protocolLabel(l)}`).join(', ')})`;
      for (const l of group) l.conflict = { reason: 'ProtocolConflict', message };
      continue;
    }
    const byHost = new Map<string, ListenerContext[]>();
    for (const l of group) byHost.set(l.hostname ?? '', [...(byHost.get(l.hostname ?? '') ?? []), l]);
    for (const [host, same] of byHost) {
      if (same.length < 2) continue;
      const message = `listeners ${same.map((l) => l.name).join(', ')} share port ${port} and hostname ${host || '(none)'}`;
      for (const l of same) l.conflict = { reason: 'HostnameConflict', message };
    }
  }
}

/**
 * markLaterConflict applies listener precedence (GEP-1713, ListenerSetSpec.listeners: the parent
 * Gateway's listeners, then ListenerSets by creation time, then by namespace/name): a ListenerSet
 * listener that is not distinct from one before it in that merged list is Conflicted, and the one
 * before it keeps its port and hostname (the v1.6 conformance tests ListenerSetHostnameConflict and
 * ListenerSetProtocolConflict accept the first and reject the later). `earlier` holds the
 * listeners that still take their port: the Gateway's own, and the earlier sets' that won.
 */
export function markLaterConflict(earlier: readonly ListenerContext[], l: ListenerContext): void {
  if (l.notAccepted) return;
  for (const other of earlier) {
    if (other.notAccepted || other.port !== l.port || transportOf(other) !== transportOf(l)) continue;
    const first = `listener ${other.name} of ${other.owner.kind} ${other.owner.namespace}/${other.owner.ref.name}`;
    if (familyOf(other) !== familyOf(l)) {
      l.conflict = { reason: 'ProtocolConflict', message: `port ${l.port} is already used by ${first} (${protocolLabel(other)}), which takes precedence` };
      return;
    }
    if ((other.hostname ?? '') === (l.hostname ?? '')) {
      l.conflict = { reason: 'HostnameConflict', message: `port ${l.port} and hostname ${l.hostname ?? '(none)'} are already used by ${first}, which takes precedence` };
      return;
    }
  }
}

/**
 * transportOf is the transport a listener's port is opened on. A UDP port and a TCP port of one
 * number are two sockets (RFC 768 and RFC 9293 ports are separate spaces; DNS serves 53 on both), so
 * a UDP listener meets only UDP listeners on its port.
 */
function transportOf(l: ListenerContext): 'tcp' | 'udp' {
  return l.protocol === 'UDP' ? 'udp' : 'tcp';
}

/** protocolLabel names a listener's protocol, with the TLS mode where it has one. */
function protocolLabel(l: ListenerContext): string {
  if (l.protocol !== 'TLS') return l.protocol;
  return `TLS ${l.spec.tls?.mode ?? 'Terminate'}`;
}

/**
 * familyOf groups protocols that can share a port: HTTPS and TLS are both routed by SNI; without
 * TLSRouteModeMixed, terminating and passthrough listeners are separate families.
 */
function familyOf(l: ListenerContext): string {
  if (l.protocol !== 'HTTPS' && l.protocol !== 'TLS') return l.protocol;
  if (supportsFeature('TLSRouteModeMixed')) return 'TLS';
  return l.spec.tls?.mode === 'Passthrough' ? 'TLS passthrough' : 'TLS termination';
}

/**
 * resolveCertificates checks a terminating listener's certificateRefs; see the Gateway API
 * ListenerTLSConfig. A reference out of the owner's namespace needs a ReferenceGrant from the
 * owner's kind: a ListenerSet does not inherit its Gateway's grants (GEP-1713).
 */
export function resolveCertificates(ctx: TranslationContext, owner: ListenerOwner, l: ListenerContext): SecretRef[] | Problem {
  const refs = l.spec.tls?.certificateRefs ?? [];
  if (refs.length === 0) return { reason: 'InvalidCertificateRef', message: 'TLS termination needs at least one certificateRef' };
  const out: SecretRef[] = [];
  for (const ref of refs) {
    const group = ref.group ?? '';
    const kind = ref.kind ?? 'Secret';
    const namespace = ref.namespace ?? owner.namespace;
    const what = `certificateRef ${namespace}/${ref.name}`;
    if (!refersTo(ref, 'Secret'))
      return { reason: 'InvalidCertificateRef', message: `${what} is a ${group ? `${group}/` : ''}${kind}; only core Secrets are supported` };
    const from = { group: GATEWAY_GROUP, kind: owner.kind, namespace: owner.namespace };
    if (!ctx.grants.isPermitted(from, { group: '', kind: 'Secret', namespace, name: ref.name }))
      return { reason: 'RefNotPermitted', message: `${what} is in another namespace and no ReferenceGrant allows it` };
    const secret = ctx.index.secrets.get(`${namespace}/${ref.name}`);
    if (!secret) return { reason: 'InvalidCertificateRef', message: `${what} does not exist` };
    if (secret.type !== 'kubernetes.io/tls')
      return { reason: 'InvalidCertificateRef', message: `${what} is of type ${secret.type ?? 'Opaque'}, not kubernetes.io/tls` };
    const { dataKeys: keys, tlsPairProblem } = secret as { dataKeys?: string[]; tlsPairProblem?: string };
    if (keys && !(keys.includes('tls.crt') && keys.includes('tls.key')))
      return { reason: 'InvalidCertificateRef', message: `${what} lacks tls.crt or tls.key` };
    // "the referenced certificate is malformed" is InvalidCertificateRef too (ListenerConditionReason)
    if (tlsPairProblem !== undefined) return { reason: 'InvalidCertificateRef', message: `${what} is not a usable certificate: ${tlsPairProblem}` };
    out.push({ namespace, name: ref.name });
  }
  return out;
}

/** GRAPH_PROTOCOLS maps a served Gateway listener protocol to the graph's (kindsForProtocol admits only these). */
const GRAPH_PROTOCOLS: Record<string, ListenerProtocol> = { HTTP: 'http', HTTPS: 'https', TLS: 'tls', TCP: 'tcp', UDP: 'udp' };

/**
 * graphListener is a served listener's graph Listener on its Gateway's binding. A ListenerSet's
 * listener names need not differ from the Gateway's or another set's (ListenerEntry.name), so its
 * id carries the set: `<binding>/listener/listenerset/<ns>/<name>/<listener>` (a section name has no
 * `/`, so it cannot meet a Gateway listener's `<binding>/listener/<listener>`).
 */
export function graphListener(gw: GatewayContext, l: ListenerContext): Listener {
  const protocol = GRAPH_PROTOCOLS[l.protocol] ?? 'tcp';
  const set = l.owner.kind === 'ListenerSet' ? `listenerset/${l.owner.namespace}/${l.owner.ref.name}/` : '';
  return {
    id: `${gw.bindingId}/listener/${set}${l.name}`,
    bindingId: gw.bindingId,
    name: l.name,
    port: l.port,
    protocol,
    ...(l.hostname !== undefined ? { hostname: l.hostname } : {}),
    ...(l.tls ? { tls: l.tls } : {}),
    source: sourceOf(l.owner.ref, l.name),
  };
}
