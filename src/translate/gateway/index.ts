import type { IHTTPRoute } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/HTTPRoute';
import type { SnapshotIndex } from '../common/index-snapshot.js';
import { StatusBook, createdOf, namespaceOf, refOf } from '../common/meta.js';
import type { TranslateOptions, TranslatorOutput } from '../types.js';
import { attachRoute } from './attachment.js';
import type { TranslationContext } from './context.js';
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
  }
  const fragments = [...ctx.gateways.values()].map((gw) => finishGateway(ctx, gw));
  return { fragments, statuses: ctx.book.all() };
}

function translateHttpRoute(ctx: TranslationContext, route: IHTTPRoute): void {
  const namespace = namespaceOf(asKube(route));
  const parents = attachRoute(ctx, {
    kind: 'HTTPRoute',
    namespace,
    parentRefs: route.spec?.parentRefs ?? [],
    hostnames: route.spec?.hostnames ?? [],
  });
  if (parents.length === 0) return;
  const { rules, verdict } = compileHttpRoute(ctx, route);
  const ref = refOf(asKube(route), 'HTTPRoute', GATEWAY_GROUP);
  writeRouteStatus(ctx, asKube(route), 'HTTPRoute', parents, verdict);
  placeHttpRules({ ref, created: createdOf(asKube(route)), idPrefix: `httproute/${namespace}/${ref.name}` }, parents, verdict, rules);
}
