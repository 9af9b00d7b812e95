import type { IGateway } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/Gateway';
import { emptyGraph } from '../../model/index.js';
import type { Condition, StreamRoute } from '../../model/index.js';
import { generationOf, namespaceOf, sourceOf } from '../common/meta.js';
import { condition, warning } from '../common/status.js';
import type { Fragment } from '../types.js';
import type { GatewayContext, ListenerContext, Problem, TranslationContext } from './context.js';
import type { ClassVerdict } from './gateway-classes.js';
import { GATEWAY_GROUP } from './kinds.js';
import { buildListeners } from './listeners.js';
import { bindingListeners, isListenerSetAccepted } from './listener-sets.js';
import { insecureFallbackCondition } from './frontend-validation.js';
import { gatewayCodec, malformedField } from './codecs.js';
import { asKube, namespacedRefOf } from './kube-object.js';
import { mergeParameters, resolveParameters } from './parameters.js';
import type { ParametersIndex } from './parameters.js';

/**
 * buildGateways makes a context for every Gateway whose class tuna accepted or refused (other
 * classes are not ours) and checks its listeners. Each Gateway gets one `address` binding: a
 * dedicated address from the edge's pool, which the reconciler assigns and writes to
 * `status.addresses` (the translator leaves addresses alone). `spec.addresses` of type IPAddress
 * (IPv4) are carried on the binding for the reconciler to ask for; other types are refused. The
 * Gateway's parameters (its class's GatewayParameters under its own, parameters.ts) go on the
 * binding too: `tunnelConnections` becomes the binding's `connections`, and `dataPlane: Dedicated`
 * (with its `deployment`) the binding's `dedicated` (docs/dedicated-data-plane.md).
 */
export function buildGateways(ctx: TranslationContext, gateways: IGateway[], classes: Map<string, ClassVerdict>, parameters: ParametersIndex): void {
  for (const obj of gateways) {
    const verdict = classes.get(obj.spec?.gatewayClassName ?? '');
    if (!verdict) continue;
    const namespace = namespaceOf(asKube(obj));
    const name = obj.metadata?.name ?? '';
    const gen = generationOf(asKube(obj));
    const gw: GatewayContext = {
      obj,
      ref: namespacedRefOf(asKube(obj), 'Gateway'),
      namespace,
      name,
      ...(gen !== undefined ? { generation: gen } : {}),
      bindingId: `binding/address/${namespace}/${name}`,
      requestedAddresses: [],
      listeners: [],
      listenerSets: [],
      virtualHosts: new Map(),
      streamRoutes: [],
      streamRouteAges: new Map(),
      claims: [],
      claimKeys: new Set(),
    };
    const malformed = malformedField(gatewayCodec, obj);
    const rejected: Problem | undefined = malformed ? { reason: 'Invalid', message: `malformed ${malformed}` } : rejectionOf(obj, verdict, parameters);
    if (rejected) gw.rejected = rejected;
    else {
      gw.requestedAddresses = requestedAddressesOf(obj);
      const own = obj.spec.infrastructure?.parametersRef;
      const resolved = own ? resolveParameters(parameters, own, 'infrastructure.parametersRef', namespace) : undefined;
      const effective = mergeParameters(verdict.parameters, resolved?.ok ? resolved.spec : undefined);
      if (effective.tunnelConnections !== undefined) gw.tunnelConnections = effective.tunnelConnections;
      if (effective.dataPlane === 'Dedicated') gw.dedicated = effective.deployment ?? {};
    }
    // A malformed spec is not read any further: its listeners cannot be trusted.
    gw.listeners = malformed ? [] : buildListeners(ctx, gw);
    if (rejected) for (const l of gw.listeners) delete l.graph;
    ctx.gateways.set(`${namespace}/${name}`, gw);
  }
}

/** rejectionOf returns why a whole Gateway cannot be accepted, if it cannot. */
function rejectionOf(obj: IGateway, verdict: ClassVerdict, parameters: ParametersIndex): Problem | undefined {
  const spec = obj.spec;
  if (!verdict.accepted)
    return { reason: 'Invalid', message: `GatewayClass ${spec.gatewayClassName} is not accepted: ${verdict.message}` };
  const badAddress = (spec.addresses ?? []).map(addressProblem).find((p) => p !== undefined);
  if (badAddress !== undefined) return { reason: 'UnsupportedAddress', message: badAddress };
  const params = spec.infrastructure?.parametersRef;
  if (params) {
    const resolved = resolveParameters(parameters, params, 'infrastructure.parametersRef', namespaceOf(asKube(obj)));
    if (!resolved.ok) return { reason: 'InvalidParameters', message: resolved.message };
  }
  // spec.tls.backend (the client certificate for TLS backends) is read by backend-client-certificate.ts
  return undefined;
}

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/** addressProblem says why one `spec.addresses` entry cannot be asked of the edge (undefined: it can). */
function addressProblem(a: { type?: string; value?: string }, i: number): string | undefined {
  const type = a.type ?? 'IPAddress';
  if (type !== 'IPAddress') return `spec.addresses[${i}].type ${type} is not supported: the edge assigns IPv4 addresses (type IPAddress) from its pool`;
  if (a.value !== undefined && a.value !== '' && !IPV4.test(a.value)) return `spec.addresses[${i}].value ${a.value} is not an IPv4 address: the edge's pool holds IPv4 addresses`;
  return undefined;
}

/** requestedAddressesOf lists the IPs `spec.addresses` asks for (an entry without a value asks for any). */
function requestedAddressesOf(obj: IGateway): string[] {
  return (obj.spec.addresses ?? []).flatMap((a) => (a.value !== undefined && a.value !== '' ? [a.value] : []));
}

/** finishGateway writes the Gateway's status (after routes attached) and returns its fragment. */
export function finishGateway(ctx: TranslationContext, gw: GatewayContext): Fragment {
  const status = ctx.book.entry(asKube(gw.obj), gw.ref);
  const served = gw.listeners.filter((l) => l.graph !== undefined);
  const bad = gw.listeners.filter((l) => l.graph === undefined);
  const gen = gw.generation;
  const conditions: Condition[] = [];
  if (gw.rejected) {
    conditions.push(condition('Accepted', false, gw.rejected.reason, gw.rejected.message, gen));
    conditions.push(condition('Programmed', false, 'Invalid', gw.rejected.message, gen));
    status.events.push(warning(gw.rejected.reason, gw.rejected.message));
  } else if (!gw.listeners.some((l) => !l.notAccepted && !l.conflict)) {
    const message = 'no listener is accepted';
    conditions.push(condition('Accepted', false, 'ListenersNotValid', message, gen));
    conditions.push(condition('Programmed', false, 'Invalid', message, gen));
  } else {
    const message =
      bad.length === 0
        ? 'all listeners are accepted'
        : `listener(s) ${bad.map((l) => l.name).join(', ')} are not valid; serving ${served.map((l) => l.name).join(', ') || 'none'}`;
    conditions.push(condition('Accepted', true, bad.length === 0 ? 'Accepted' : 'ListenersNotValid', message, gen));
    // The reconciler replaces True with False/AddressNotAssigned until the edge has assigned the address.
    conditions.push(
      served.length > 0
        ? condition('Programmed', true, 'Programmed', 'configuration handed to the tunnel manager', gen)
        : condition('Programmed', false, 'Invalid', 'no listener can be served', gen),
    );
  }
  const insecure = gw.rejected ? undefined : insecureFallbackCondition(gw.obj, gen);
  if (insecure) conditions.push(insecure);
  for (const l of gw.listeners) for (const p of listenerProblems(l)) status.events.push(warning(p.reason, `listener ${l.name}: ${p.message}`));
  status.status = { conditions, listeners: gw.listeners.map((l) => listenerStatus(l, gen)), ...attachedListenerSetsOf(gw) };
  return fragmentOf(gw, bindingListeners(gw).filter((l) => l.graph !== undefined));
}

/**
 * attachedListenerSetsOf is the Gateway's `status.attachedListenerSets` (the ListenerSets attached
 * and Accepted, GEP-1713), written where ListenerSets are in play: some name the Gateway, it sets
 * `spec.allowedListeners`, or its status has the field (so a count that fell to 0 is written as 0;
 * a status patch leaves alone the fields it does not name). Other Gateways' statuses stay as before.
 */
function attachedListenerSetsOf(gw: GatewayContext): { attachedListenerSets?: number } {
  const current = (gw.obj as { status?: { attachedListenerSets?: unknown } }).status?.attachedListenerSets;
  if (gw.listenerSets.length === 0 && gw.obj.spec?.allowedListeners === undefined && current === undefined) return {};
  return { attachedListenerSets: gw.listenerSets.filter(isListenerSetAccepted).length };
}

/** listenerProblems are the problems of a listener, for its Warning events. */
export function listenerProblems(l: ListenerContext): Problem[] {
  return [l.notAccepted, l.conflict, l.unresolved].filter((p): p is Problem => p !== undefined);
}

/** listenerStatus is a Gateway's ListenerStatus or a ListenerSet's ListenerEntryStatus (the same shape). */
export function listenerStatus(l: ListenerContext, gen: number | undefined): Record<string, unknown> {
  const blocking = l.conflict ?? l.notAccepted;
  const notProgrammed = l.conflict ?? l.notAccepted ?? l.unresolved;
  // A listener whose port is claimed by an incompatible protocol or TLS mode supports no kind in this
  // configuration (ListenerStatus.supportedKinds "for that Listener configuration"; the v1.6.3
  // conformance test TLSRouteListenerMixedTerminationNotSupported expects the list empty).
  const kinds = l.conflict?.reason === 'ProtocolConflict' ? [] : l.kinds;
  return {
    name: l.name,
    supportedKinds: kinds.map((kind) => ({ group: GATEWAY_GROUP, kind })),
    attachedRoutes: l.attached.size,
    conditions: [
      blocking
        ? condition('Accepted', false, blocking.reason, blocking.message, gen)
        : condition('Accepted', true, 'Accepted', 'listener is accepted', gen),
      notProgrammed
        ? condition('Programmed', false, l.conflict ? l.conflict.reason : 'Invalid', notProgrammed.message, gen)
        : condition('Programmed', true, 'Programmed', 'listener is programmed', gen),
      l.unresolved
        ? condition('ResolvedRefs', false, l.unresolved.reason, l.unresolved.message, gen)
        : condition('ResolvedRefs', true, 'ResolvedRefs', 'all references are resolved', gen),
      l.conflict
        ? condition('Conflicted', true, l.conflict.reason, l.conflict.message, gen)
        : condition('Conflicted', false, 'NoConflicts', 'no conflicts', gen),
    ],
  };
}

function fragmentOf(gw: GatewayContext, served: ListenerContext[]): Fragment {
  const graph = emptyGraph();
  const group = `gateway/${gw.namespace}/${gw.name}`;
  if (gw.rejected || served.length === 0) return { group, graph, claims: [] };
  graph.bindings.push({
    id: gw.bindingId,
    kind: 'address',
    hostnames: [...new Set(gw.claims.map((c) => c.hostname))],
    ...(gw.requestedAddresses.length > 0 ? { addresses: [...gw.requestedAddresses] } : {}),
    ...(gw.tunnelConnections !== undefined ? { connections: gw.tunnelConnections } : {}),
    ...(gw.dedicated !== undefined ? { dedicated: gw.dedicated } : {}),
    source: sourceOf(gw.ref),
  });
  for (const l of served) if (l.graph) graph.listeners.push(l.graph);
  // Listener isolation: a listener with a hostname owns that hostname on its port even without
  // routes, so its requests get 404 there instead of falling through to a broader listener.
  for (const l of served) {
    if (!l.graph || l.hostname === undefined || (l.protocol !== 'HTTP' && l.protocol !== 'HTTPS')) continue;
    const id = `${l.graph.id}/vhost/${l.hostname}`;
    if (!gw.virtualHosts.has(id)) gw.virtualHosts.set(id, { id, listenerId: l.graph.id, hostname: l.hostname, routes: [] });
  }
  graph.virtualHosts.push(...gw.virtualHosts.values());
  graph.streamRoutes.push(...servedStreamRoutes(gw));
  return { group, graph, claims: gw.claims };
}

/**
 * servedStreamRoutes are the stream routes the data plane gets. A TCP or UDP listener has no
 * hostname to tell its routes apart, so of several TCPRoutes (UDPRoutes) attached to it only the
 * oldest (creation time, then namespace/name) is bound and receives traffic; every one stays
 * Accepted and counted in attachedRoutes (Gateway API conflict resolution, "the oldest Route wins";
 * conformance TCPRouteMultipleRoutesAttachment, UDPRouteMultipleRoutesAttachment).
 */
function servedStreamRoutes(gw: GatewayContext): StreamRoute[] {
  const isUnnamed = (p: string | undefined): boolean => p === 'tcp' || p === 'udp';
  const tcp = new Set(gw.listeners.filter((l) => isUnnamed(l.graph?.protocol)).map((l) => l.graph!.id));
  const oldest = new Map<string, StreamRoute>();
  const age = (r: StreamRoute): string => gw.streamRouteAges.get(r.id) ?? '';
  for (const r of gw.streamRoutes) {
    if (!tcp.has(r.listenerId)) continue;
    const held = oldest.get(r.listenerId);
    if (held === undefined || age(r) < age(held)) oldest.set(r.listenerId, r);
  }
  return gw.streamRoutes.filter((r) => !tcp.has(r.listenerId) || oldest.get(r.listenerId) === r);
}
