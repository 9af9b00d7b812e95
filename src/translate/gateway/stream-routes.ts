import type { IParentReference } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/ParentReference';
import type { Backend, ObjectRef } from '../../model/index.js';
import { createdOf, namespaceOf, sourceOf } from '../common/meta.js';
import { attachRoute } from './attachment.js';
import { ownsHostname } from './emit.js';
import { malformedField, routeParentsCodec } from './codecs.js';
import { resolveBackend } from './backend-refs.js';
import type { BackendObjectRef } from './backend-refs.js';
import type { Problem, TranslationContext } from './context.js';
import { ANY_HOST } from './hostnames.js';
import { hostnameProblem } from './http-routes.js';
import { asKube, namespacedRefOf } from './kube-object.js';
import type { GatewayApiObject } from './kube-object.js';
import { isAttached, writeRouteStatus } from './route-status.js';
import type { RouteVerdict } from './route-status.js';
import type { StreamRouteKindRow } from '../kinds.js';


/** StreamRouteObject is the shape TLSRoute (v1, v1alpha2), TCPRoute and UDPRoute share. */
export interface StreamRouteObject extends GatewayApiObject {
  spec?: {
    parentRefs?: IParentReference[];
    hostnames?: string[];
    rules?: { backendRefs?: BackendObjectRef[] }[];
  };
}

/**
 * translateStreamRoute attaches a TLSRoute (to TLS listeners, either mode; SNI hostnames
 * intersected with the listener's), a TCPRoute (to TCP listeners) or a UDPRoute (to UDP listeners)
 * and emits one StreamRoute per listener, with the weighted backends of its rules spoken to as raw
 * TCP, or as UDP datagrams for a UDPRoute (a backendRef must name a UDP Service port). `row` is the
 * kind's row of the table of kinds: its codec says which fields must be well-formed.
 */
export function translateStreamRoute(ctx: TranslationContext, row: StreamRouteKindRow, route: StreamRouteObject): void {
  const kind = row.kind;
  const obj = asKube(route);
  const namespace = namespaceOf(obj);
  if (malformedField(routeParentsCodec, route)) return;
  const malformed = malformedField(row.codec, route);
  const hostnames = kind === 'TLSRoute' && !malformed ? (route.spec?.hostnames ?? []) : [];
  const parents = attachRoute(ctx, { kind, namespace, parentRefs: route.spec?.parentRefs ?? [], hostnames });
  if (parents.length === 0) return;
  const unresolved: Problem[] = [];
  const backends: Backend[] = [];
  for (const rule of malformed ? [] : (route.spec?.rules ?? [])) {
    for (const b of rule.backendRefs ?? []) {
      const r = resolveBackend(ctx, { kind, namespace }, b, kind === 'UDPRoute' ? 'udp' : 'tcp');
      backends.push(r.backend);
      if (r.problem) unresolved.push(r.problem);
    }
  }
  const verdict: RouteVerdict = { unresolved };
  const bad: Problem | undefined = malformed ? { reason: 'UnsupportedValue', message: `malformed ${malformed}` } : hostnameProblem(hostnames);
  if (bad) verdict.invalid = bad;
  writeRouteStatus(ctx, obj, kind, parents, verdict);
  const ref: ObjectRef = namespacedRefOf(obj, kind);
  const placed = new Set<string>();
  for (const p of parents) {
    if (!isAttached(p, verdict)) continue;
    for (const a of p.listeners) {
      if (!a.listener.graph) continue; // attached, but the listener is not served
      const listenerId = a.listener.graph.id;
      if (placed.has(listenerId)) continue;
      placed.add(listenerId);
      // Listener isolation: SNI names a narrower listener of the port covers are its, not this one's.
      const hostnames = a.hostnames.filter((h) => h !== ANY_HOST && ownsHostname(p.gateway, a.listener, h));
      if (hostnames.length === 0 && !a.hostnames.includes(ANY_HOST)) continue;
      const id = `${kind.toLowerCase()}/${namespace}/${ref.name}/on/${listenerId}`;
      p.gateway.streamRouteAges.set(id, `${createdOf(obj)} ${namespace}/${ref.name}`);
      p.gateway.streamRoutes.push({
        id,
        listenerId,
        source: sourceOf(ref),
        hostnames,
        backends,
      });
    }
  }
}
