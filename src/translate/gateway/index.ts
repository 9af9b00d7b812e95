import type { IGRPCRoute } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/GRPCRoute';
import type { IHTTPRoute } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/HTTPRoute';
import { compareStrings } from '../../model/index.js';
import type { SnapshotIndex } from '../common/index-snapshot.js';
import { StatusBook, createdOf, namespaceOf } from '../common/meta.js';
import { warning } from '../common/status.js';
import type { KubeObject } from '../common/meta.js';
import type { TranslateOptions, TranslatorOutput } from '../types.js';
import { attachRoute } from './attachment.js';
import type { ParentAttachment } from './attachment.js';
import type { GatewayContext, TranslationContext } from './context.js';
import { resolveCrossKindConflicts } from './cross-kind.js';
import { keepOneCopy } from './dedupe.js';
import type { PendingHttpRoute } from './cross-kind.js';
import { placeHttpRules } from './emit.js';
import { translateGatewayClasses } from './gateway-classes.js';
import { buildGateways, finishGateway } from './gateways.js';
import { indexParameters } from './parameters.js';
import { finishListenerSet } from './listener-set-status.js';
import { buildListenerSets } from './listener-sets.js';
import { compileGrpcRoute } from './grpc-routes.js';
import { compileHttpRoute } from './http-routes.js';
import { asKube, namespacedRefOf } from './kube-object.js';
import { ReferenceGrants } from './reference-grants.js';
import { writeRouteStatus } from './route-status.js';
import type { CompiledRule } from './rules.js';
import { translateStreamRoute } from './stream-routes.js';
import type { StreamRouteObject } from './stream-routes.js';
import { STREAM_ROUTE_KINDS } from '../kinds.js';
import type { HttpRouteKind } from '../kinds.js';
import type { RouteVerdict } from './route-status.js';
import { grpcRouteCodec, httpRouteCodec, malformedField, routeParentsCodec } from './codecs.js';

export { applyBackendTlsPolicies } from './backend-tls-policies.js';
export { clientCertificateRefOf } from './backend-client-certificate.js';
export { SUPPORTED_FEATURES, SUPPORTED_BUNDLE_VERSIONS, supportedVersionCondition } from './features.js';

/**
 * translateGatewayApi translates the Gateway API objects of tuna's GatewayClasses (controllerName
 * `options.gatewayControllerName`) into one fragment per Gateway (group `gateway/<ns>/<name>`) and
 * the status of every GatewayClass, Gateway and route it owns. See docs/translators/gateway.md.
 */
export function translateGatewayApi(index: SnapshotIndex, options: TranslateOptions): TranslatorOutput {
  const snap = index.snapshot;
  const ctx: TranslationContext = {
    index,
    controllerName: options.gatewayControllerName,
    grants: new ReferenceGrants(snap.referenceGrants),
    book: new StatusBook(),
    gateways: new Map(),
    listenerSets: new Map(),
  };
  const repeated = new Set<string>();
  const parameters = indexParameters(snap.gatewayParameters);
  const classes = translateGatewayClasses(keepOneCopy(snap.gatewayClasses, repeated), options.gatewayControllerName, ctx.book, parameters);
  buildGateways(ctx, keepOneCopy(snap.gateways, repeated), classes, parameters);
  buildListenerSets(ctx, keepOneCopy(snap.listenerSets, repeated));
  if (ctx.gateways.size > 0) {
    translateHttpLikeRoutes(ctx, keepOneCopy(snap.httpRoutes, repeated), keepOneCopy(snap.grpcRoutes, repeated));
    for (const kind of STREAM_ROUTE_KINDS) {
      const routes: StreamRouteObject[] = snap[kind.key];
      for (const route of keepOneCopy(routes, repeated)) translateStreamRoute(ctx, kind, route);
    }
  }
  // Fragments in name order: merge.ts settles equal claims by first seen, so order must not follow the input.
  const ordered = [...ctx.gateways.entries()].sort(([a], [b]) => compareStrings(a, b)).map(([, gw]) => gw);
  dropRepeatedClaims(ordered);
  const fragments = ordered.map((gw) => finishGateway(ctx, gw));
  for (const gw of ordered) for (const set of gw.listenerSets) finishListenerSet(ctx, set);
  const statuses = ctx.book.all();
  for (const s of statuses) {
    if (repeated.has(`${s.ref.kind}/${s.ref.namespace ?? ''}/${s.ref.name}`))
      s.events.push(warning('DuplicateObject', `${s.ref.kind} ${s.ref.name} appears more than once in the input; the oldest copy is used`));
  }
  return { fragments, statuses };
}

/**
 * dropRepeatedClaims keeps a route's claim on a hostname for the first Gateway (by name) only: a
 * route attached to several Gateways must not compete with itself for the shared listener; the
 * other Gateways still serve it on their dedicated addresses.
 */
function dropRepeatedClaims(gateways: GatewayContext[]): void {
  const taken = new Set<string>();
  for (const gw of gateways) {
    gw.claims = gw.claims.filter((c) => {
      const key = `${c.hostname} ${c.owner.kind}/${c.owner.namespace ?? ''}/${c.owner.name}`;
      if (taken.has(key)) return false;
      taken.add(key);
      return true;
    });
  }
}

/** translateHttpLikeRoutes attaches HTTPRoutes and GRPCRoutes, settles cross serving, then publishes them. */
function translateHttpLikeRoutes(ctx: TranslationContext, http: IHTTPRoute[], grpc: IGRPCRoute[]): void {
  const pending: (PendingHttpRoute & { rules: CompiledRule[]; obj: KubeObject })[] = [];
  for (const route of http) {
    const malformed = malformedField(httpRouteCodec, route);
    const parents = attachHttpLike(ctx, 'HTTPRoute', route, malformed);
    if (parents.length > 0) pending.push({ ...pendingOf('HTTPRoute', route, parents), ...(malformed ? rejected(malformed) : compileHttpRoute(ctx, route)) });
  }
  for (const route of grpc) {
    const malformed = malformedField(grpcRouteCodec, route);
    const parents = attachHttpLike(ctx, 'GRPCRoute', route, malformed);
    if (parents.length > 0) pending.push({ ...pendingOf('GRPCRoute', route, parents), ...(malformed ? rejected(malformed) : compileGrpcRoute(ctx, route)) });
  }
  resolveCrossKindConflicts(pending);
  for (const p of pending) {
    const ref = namespacedRefOf(p.obj, p.kind);
    writeRouteStatus(ctx, p.obj, p.kind, p.parents, p.verdict);
    const idPrefix = `${p.kind.toLowerCase()}/${p.key}`;
    placeHttpRules({ ref, created: p.created, idPrefix }, p.parents, p.verdict, p.rules);
  }
}

type HttpLike = IHTTPRoute | IGRPCRoute;

function pendingOf(kind: HttpRouteKind, route: HttpLike, parents: ParentAttachment[]) {
  const obj = asKube(route);
  return { kind, obj, key: `${namespaceOf(obj)}/${obj.metadata?.name ?? ''}`, created: createdOf(obj), parents };
}

/**
 * attachHttpLike finds a route's parents. A malformed route is still attached when its parentRefs
 * can be read, so that it can be told why it is not accepted; its hostnames are then not trusted.
 */
function attachHttpLike(ctx: TranslationContext, kind: HttpRouteKind, route: HttpLike, malformed?: string): ParentAttachment[] {
  if (malformedField(routeParentsCodec, route)) return [];
  return attachRoute(ctx, {
    kind,
    namespace: namespaceOf(asKube(route)),
    parentRefs: route.spec?.parentRefs ?? [],
    hostnames: malformed ? [] : (route.spec?.hostnames ?? []),
  });
}

/** rejected is the compile result of a malformed route: no rules, Accepted=False UnsupportedValue. */
function rejected(malformed: string): { rules: CompiledRule[]; verdict: RouteVerdict } {
  return { rules: [], verdict: { invalid: { reason: 'UnsupportedValue', message: `malformed ${malformed}` }, unresolved: [] } };
}
