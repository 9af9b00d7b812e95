import type { IGRPCRoute } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/GRPCRoute';
import type { IHTTPRoute } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/HTTPRoute';
import { compareStrings } from '../../model/index.js';
import type { SnapshotIndex } from '../common/index-snapshot.js';
import { StatusBook, createdOf, namespaceOf, refOf } from '../common/meta.js';
import type { TranslateOptions, TranslatorOutput } from '../types.js';
import { attachRoute } from './attachment.js';
import type { ParentAttachment } from './attachment.js';
import { compileGrpcRoute } from './grpc-routes.js';
import type { RouteVerdict } from './route-status.js';
import type { CompiledRule } from './rules.js';
import { translateStreamRoute } from './stream-routes.js';
import type { GatewayContext, TranslationContext } from './context.js';
import { placeHttpRules } from './emit.js';
import { translateGatewayClasses } from './gateway-classes.js';
import { buildGateways, finishGateway } from './gateways.js';
import { compileHttpRoute } from './http-routes.js';
import { GATEWAY_GROUP } from './kinds.js';
import { asKube } from './kube-object.js';
import { ReferenceGrants } from './reference-grants.js';
import { writeRouteStatus } from './route-status.js';

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
  };
  const classes = translateGatewayClasses(snap.gatewayClasses, options.gatewayControllerName, ctx.book);
  buildGateways(ctx, snap.gateways, classes);
  if (ctx.gateways.size > 0) {
    for (const route of snap.httpRoutes) translateHttpRoute(ctx, route);
    for (const route of snap.grpcRoutes) translateGrpcRoute(ctx, route);
    for (const route of snap.tlsRoutes) translateStreamRoute(ctx, 'TLSRoute', route);
    for (const route of snap.tcpRoutes) translateStreamRoute(ctx, 'TCPRoute', route);
  }
  // Fragments in name order: merge.ts settles equal claims by first seen, so order must not follow the input.
  const ordered = [...ctx.gateways.entries()].sort(([a], [b]) => compareStrings(a, b)).map(([, gw]) => gw);
  dropRepeatedClaims(ordered);
  const fragments = ordered.map((gw) => finishGateway(ctx, gw));
  return { fragments, statuses: ctx.book.all() };
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

function translateHttpRoute(ctx: TranslationContext, route: IHTTPRoute): void {
  const parents = attachHttpLike(ctx, 'HTTPRoute', route);
  if (parents.length === 0) return;
  const { rules, verdict } = compileHttpRoute(ctx, route);
  finishHttpLike(ctx, 'HTTPRoute', route, parents, verdict, rules);
}

function translateGrpcRoute(ctx: TranslationContext, route: IGRPCRoute): void {
  const parents = attachHttpLike(ctx, 'GRPCRoute', route);
  if (parents.length === 0) return;
  const { rules, verdict } = compileGrpcRoute(ctx, route);
  finishHttpLike(ctx, 'GRPCRoute', route, parents, verdict, rules);
}

type HttpLike = IHTTPRoute | IGRPCRoute;

function attachHttpLike(ctx: TranslationContext, kind: 'HTTPRoute' | 'GRPCRoute', route: HttpLike): ParentAttachment[] {
  return attachRoute(ctx, {
    kind,
    namespace: namespaceOf(asKube(route)),
    parentRefs: route.spec?.parentRefs ?? [],
    hostnames: route.spec?.hostnames ?? [],
  });
}

function finishHttpLike(
  ctx: TranslationContext,
  kind: 'HTTPRoute' | 'GRPCRoute',
  route: HttpLike,
  parents: ParentAttachment[],
  verdict: RouteVerdict,
  rules: CompiledRule[],
): void {
  const obj = asKube(route);
  const ref = refOf(obj, kind, GATEWAY_GROUP);
  writeRouteStatus(ctx, obj, kind, parents, verdict);
  const idPrefix = `${kind.toLowerCase()}/${ref.namespace ?? ''}/${ref.name}`;
  placeHttpRules({ ref, created: createdOf(obj), idPrefix }, parents, verdict, rules);
}
