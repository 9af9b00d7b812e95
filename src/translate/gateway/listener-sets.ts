import type { V1LabelSelector } from '@kubernetes/client-node';
import type { IListener } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/Listener';
import type { IListenerSet } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/ListenerSet';
import { compareStrings } from '../../model/index.js';
import { createdOf, generationOf, namespaceOf } from '../common/meta.js';
import { listenerSetCodec, malformedField } from './codecs.js';
import type { GatewayContext, ListenerContext, ListenerOwner, ListenerSetContext, Problem, TranslationContext } from './context.js';
import { asKube, namespacedRefOf } from './kube-object.js';
import { checkListener, graphListener, markLaterConflict } from './listeners.js';
import { matchesLabelSelector } from './namespace-selector.js';
import { refersTo } from '../kinds.js';
import type { KindLike } from '../kinds.js';

/**
 * buildListenerSets reads the ListenerSets (Gateway API v1.6, GEP-1713) whose parentRef names a
 * Gateway of a tuna class (others belong to other controllers and are left alone), in listener
 * precedence order: by creation time, oldest first, then by `namespace/name`. A set the Gateway's
 * `spec.allowedListeners` does not admit is NotAllowed (the default admits none); one whose Gateway
 * is not accepted is ParentNotAccepted. The listeners of the others are checked as a Gateway's are,
 * against the set's own namespace, and then against every listener before them (markLaterConflict).
 */
export function buildListenerSets(ctx: TranslationContext, listenerSets: IListenerSet[]): void {
  const found: ListenerSetContext[] = [];
  for (const obj of listenerSets) {
    const set = listenerSetContext(ctx, obj);
    if (set) found.push(set);
  }
  found.sort((a, b) => compareCreated(a.created, b.created) || compareStrings(`${a.namespace}/${a.name}`, `${b.namespace}/${b.name}`));
  for (const set of found) {
    set.rejected ??= rejectionOf(ctx, set);
    if (!set.rejected) set.listeners = buildSetListeners(ctx, set);
    set.gateway.listenerSets.push(set);
    ctx.listenerSets.set(`${set.namespace}/${set.name}`, set);
  }
}

/** listenerSetContext starts the context of a ListenerSet whose parent is one of tuna's Gateways (undefined: not ours). */
function listenerSetContext(ctx: TranslationContext, obj: IListenerSet): ListenerSetContext | undefined {
  const kube = asKube(obj);
  const namespace = namespaceOf(kube);
  const parent: unknown = obj.spec?.parentRef;
  if (typeof parent !== 'object' || parent === null) return undefined;
  const { group, kind, name, namespace: parentNamespace } = parent as Record<string, unknown>;
  if (!refersTo({ group, kind } as KindLike, 'Gateway') || typeof name !== 'string') return undefined;
  const gateway = ctx.gateways.get(`${typeof parentNamespace === 'string' ? parentNamespace : namespace}/${name}`);
  if (!gateway) return undefined;
  const gen = generationOf(kube);
  const set: ListenerSetContext = {
    obj,
    ref: namespacedRefOf(kube, 'ListenerSet'),
    namespace,
    name: obj.metadata?.name ?? '',
    ...(gen !== undefined ? { generation: gen } : {}),
    created: createdOf(kube),
    gateway,
    listeners: [],
  };
  const malformed = malformedField(listenerSetCodec, obj);
  if (malformed) set.rejected = { reason: 'Invalid', message: `malformed ${malformed}` };
  return set;
}

/** rejectionOf says why a well-formed ListenerSet cannot attach to its Gateway, if it cannot. */
function rejectionOf(ctx: TranslationContext, set: ListenerSetContext): Problem | undefined {
  const gw = set.gateway;
  const gwName = `Gateway ${gw.namespace}/${gw.name}`;
  if (!admitsListenerSet(ctx, gw, set.namespace)) {
    const from = gw.obj.spec?.allowedListeners?.namespaces?.from ?? 'None';
    return { reason: 'NotAllowed', message: `${gwName} does not allow ListenerSets from namespace ${set.namespace} (spec.allowedListeners.namespaces.from: ${from})` };
  }
  if (!isGatewayAccepted(gw)) return { reason: 'ParentNotAccepted', message: `${gwName} is not accepted` };
  return undefined;
}

/**
 * admitsListenerSet implements `spec.allowedListeners.namespaces` (From Same, All, Selector, None):
 * "The default value is to allow no ListenerSets", and an unknown value or a Selector without its
 * selector admits none, so a typo never widens what attaches to a Gateway.
 */
function admitsListenerSet(ctx: TranslationContext, gw: GatewayContext, namespace: string): boolean {
  const rule = gw.obj.spec?.allowedListeners?.namespaces;
  switch (rule?.from ?? 'None') {
    case 'All':
      return true;
    case 'Same':
      return namespace === gw.namespace;
    case 'Selector': {
      const selector = rule?.selector as V1LabelSelector | undefined;
      if (!selector) return false;
      // The API server labels every namespace with its name (kubernetes.io/metadata.name).
      const labels = { ...(ctx.index.namespaces.get(namespace)?.metadata?.labels ?? {}), 'kubernetes.io/metadata.name': namespace };
      return matchesLabelSelector(selector, labels);
    }
    default:
      return false;
  }
}

/** isGatewayAccepted says whether a Gateway is Accepted: not refused as a whole, and some listener of its own accepted. */
export function isGatewayAccepted(gw: GatewayContext): boolean {
  return !gw.rejected && gw.listeners.some((l) => !l.notAccepted && !l.conflict);
}

/** buildSetListeners checks a ListenerSet's listeners and gives each that passes, and wins its port, a graph Listener. */
function buildSetListeners(ctx: TranslationContext, set: ListenerSetContext): ListenerContext[] {
  const gw = set.gateway;
  const owner: ListenerOwner = { kind: 'ListenerSet', namespace: set.namespace, ref: set.ref };
  // Gateway listeners first, then the sets before this one (gw.listenerSets is filled in precedence order).
  const earlier = [...gw.listeners, ...gw.listenerSets.flatMap((s) => s.listeners).filter((l) => !l.conflict)];
  const seen = new Set<string>();
  const listeners: ListenerContext[] = [];
  for (const spec of set.obj.spec?.listeners ?? []) {
    // A ListenerEntry is a Listener in all but its doc comments.
    const l = checkListener(ctx, gw, owner, spec as IListener);
    if (seen.has(l.name)) l.notAccepted ??= { reason: 'UnsupportedValue', message: `listener name ${l.name} is used twice` };
    seen.add(l.name);
    markLaterConflict([...earlier, ...listeners.filter((x) => !x.conflict)], l);
    listeners.push(l);
  }
  for (const l of listeners) if (!l.notAccepted && !l.unresolved && !l.conflict) l.graph = graphListener(gw, l);
  return listeners;
}

/**
 * isListenerSetAccepted says whether a ListenerSet is attached (Accepted=True): allowed, its parent
 * accepted, and at least one listener served; these count in the Gateway's `attachedListenerSets`.
 */
export function isListenerSetAccepted(set: ListenerSetContext): boolean {
  return !set.rejected && set.listeners.some((l) => l.graph !== undefined);
}

/**
 * bindingListeners lists every listener served on a Gateway's address: its own, then those of its
 * attached ListenerSets in precedence order ("Listeners in a Gateway and their attached
 * ListenerSets are concatenated as a list when programming the underlying infrastructure").
 */
export function bindingListeners(gw: GatewayContext): ListenerContext[] {
  return [...gw.listeners, ...gw.listenerSets.filter(isListenerSetAccepted).flatMap((s) => s.listeners)];
}

/** compareCreated orders RFC 3339 timestamps oldest first, an unknown one last. */
function compareCreated(a: string, b: string): number {
  if (a === b) return 0;
  if (a === '') return 1;
  if (b === '') return -1;
  return compareStrings(a, b);
}
