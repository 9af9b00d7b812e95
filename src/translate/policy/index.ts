/**
 * RoutePolicy attachment (GEP-713 direct policy attachment; docs/policies.md). Runs on the merged
 * graph: each policy's targets (a Gateway or one of its listeners, an HTTPRoute or one named rule,
 * an Ingress, all in the policy's namespace) give the HTTP routes it applies to, and an HTTPRoute
 * rule's `ExtensionRef` filter naming a RoutePolicy applies it to that rule. More specific wins,
 * field by field: Gateway < Gateway listener < HTTPRoute / Ingress < HTTPRoute rule < ExtensionRef.
 * Two policies setting one field on one target: the older (creationTimestamp, then name) wins, the
 * other is `Accepted=False, Conflicted` for that target and applies nothing there. A policy whose
 * values or Secrets are bad applies nothing; if it asked for access control (basic or key auth, a
 * JWT, IP ranges) its targets' routes answer 500 instead (fail closed). Nothing else is disturbed.
 */
import { decodeWith } from '../../codec/index.js';
import type { RoutePolicy, RoutePolicyTargetRef } from '../../crd/index.js';
import { TUNA_GROUP, routePolicyCodec } from '../../crd/index.js';
import type { Condition, HttpRoute, ObjectStatus, RoutePolicies } from '../../model/index.js';
import { compareStrings, policyKinds, refKey } from '../../model/index.js';
import type { SnapshotIndex } from '../common/index-snapshot.js';
import { createdOf, generationOf, namespaceOf } from '../common/meta.js';
import { condition, warning } from '../common/status.js';
import { asKube } from '../gateway/kube-object.js';
import { GATEWAY_GROUP } from '../kinds.js';
import type { TranslateOptions, TranslateResult } from '../types.js';
import { resolvePolicy } from './resolve.js';
import type { PolicyProblem, ResolvedPolicy } from './resolve.js';
import { isGroupKind, isKind } from '../kinds.js';
import type { KindName } from '../kinds.js';

/** isRoutePolicyRef says whether an ExtensionRef names a RoutePolicy. */
export function isRoutePolicyRef(ref: { group?: string; kind?: string } | undefined): boolean {
  return isGroupKind(ref, 'RoutePolicy');
}

interface Target {
  ref: RoutePolicyTargetRef;
  level: number;
  /** the routes of the graph it covers */
  routes: HttpRoute[];
  /** what conflicts are counted on, when the ref alone does not say (an ExtensionRef's rule index) */
  key?: string;
}

interface Entry {
  obj: RoutePolicy;
  key: string;
  created: string;
  resolved: ResolvedPolicy;
  accessControl: boolean;
  ancestors: { ref: RoutePolicyTargetRef; conditions: Condition[] }[];
}

const LEVEL_GATEWAY = 0;
const LEVEL_LISTENER = 1;
const LEVEL_ROUTE = 2;
const LEVEL_RULE = 3;
const LEVEL_EXTENSION = 4;

/** applyRoutePolicies attaches every RoutePolicy of the snapshot to the graph of `result` and adds the policies' statuses. */
export function applyRoutePolicies(index: SnapshotIndex, opts: TranslateOptions, result: TranslateResult): TranslateResult {
  const objects = index.snapshot.routePolicies;
  if (objects.length === 0) return result;
  const routes = result.graph.virtualHosts.flatMap((v) => v.routes.map((r) => ({ vhostListener: v.listenerId, route: r })));
  const listenerSource = new Map(result.graph.listeners.map((l) => [l.id, l.source]));
  const entries = new Map<string, Entry>();
  for (const obj of objects) {
    const ns = namespaceOf(obj);
    const key = `${ns}/${obj.metadata?.name ?? ''}`;
    const decoded = decodeWith(routePolicyCodec, obj);
    const spec = decoded.ok ? decoded.value.spec : undefined;
    const resolved: ResolvedPolicy = spec ? resolvePolicy(`RoutePolicy ${key}`, ns, spec, index) : { kind: 'invalid', problems: [{ condition: 'Accepted', reason: 'Invalid', message: decoded.ok ? '' : decoded.errors.join('; ') }] };
    const raw = (obj as { spec?: Record<string, unknown> }).spec ?? {};
    entries.set(key, { obj, key, created: createdOf(obj), resolved, accessControl: ['basicAuth', 'keyAuth', 'jwt', 'oidc', 'externalAuth', 'ipAccess'].some((k) => raw[k] !== undefined), ancestors: [] });
  }
  const ordered = [...entries.values()].sort((a, b) => (a.created !== b.created ? (a.created === '' ? 1 : b.created === '' ? -1 : compareStrings(a.created, b.created)) : compareStrings(a.key, b.key)));

  // per graph route: the winning policies by level, and fields taken per target
  const perRoute = new Map<HttpRoute, RoutePolicies[]>();
  const failClosed = new Set<HttpRoute>();
  const taken = new Map<string, Map<string, string>>();
  const add = (route: HttpRoute, level: number, p: RoutePolicies): void => {
    const list = perRoute.get(route) ?? [];
    list[level] = { ...(list[level] ?? {}), ...p };
    perRoute.set(route, list);
  };

  const attach = (e: Entry, target: Target | PolicyProblem, ref: RoutePolicyTargetRef): void => {
    const gen = generationOf(e.obj);
    const conditions: Condition[] = [];
    if ('reason' in target) {
      conditions.push(condition('Accepted', false, target.reason, target.message, gen));
      e.ancestors.push({ ref, conditions });
      return;
    }
    if (e.resolved.kind === 'invalid') {
      const problems = e.resolved.problems;
      const refs = problems.filter((p) => p.condition === 'ResolvedRefs');
      const message = problems.map((p) => p.message).join('; ') + (e.accessControl ? '; the routes of this target answer 500 until it is fixed' : '');
      conditions.push(condition('Accepted', false, 'Invalid', message, gen));
      conditions.push(refs.length > 0 ? condition('ResolvedRefs', false, refs[0]?.reason ?? 'AuthSecretNotFound', refs.map((p) => p.message).join('; '), gen) : condition('ResolvedRefs', true, 'ResolvedRefs', 'all Secret references resolved', gen));
      if (e.accessControl) for (const r of target.routes) failClosed.add(r);
      e.ancestors.push({ ref, conditions });
      return;
    }
    const fields = policyKinds.filter((k) => e.resolved.kind === 'ok' && e.resolved.policies[k] !== undefined);
    const targetKey = target.key ?? `${target.level}/${ref.group}/${ref.kind}/${ref.name}/${ref.sectionName ?? ''}`;
    const owners = taken.get(targetKey) ?? new Map<string, string>();
    taken.set(targetKey, owners);
    const clash = fields.filter((f) => owners.has(f) && owners.get(f) !== e.key);
    if (clash.length > 0) {
      const winner = owners.get(clash[0] ?? '') ?? '';
      conditions.push(condition('Accepted', false, 'Conflicted', `RoutePolicy ${winner} is older and already sets ${clash.join(', ')} on this target; this policy applies nothing here`, gen));
    } else {
      for (const f of fields) owners.set(f, e.key);
      for (const r of target.routes) add(r, target.level, e.resolved.policies);
      conditions.push(condition('Accepted', true, 'Accepted', 'policy applied to the target', gen));
    }
    conditions.push(condition('ResolvedRefs', true, 'ResolvedRefs', 'all Secret references resolved', gen));
    e.ancestors.push({ ref, conditions });
  };

  for (const e of ordered) {
    const spec = (e.obj as { spec?: { targetRefs?: unknown } }).spec;
    const targetRefs = Array.isArray(spec?.targetRefs) ? (spec.targetRefs as RoutePolicyTargetRef[]) : [];
    const ns = namespaceOf(e.obj);
    for (const ref of targetRefs) attach(e, findTarget(index, ns, ref, routes, listenerSource), ref);
  }

  // ExtensionRef filters: the policy applies to that rule of that HTTPRoute only
  for (const hr of index.snapshot.httpRoutes) {
    const ns = namespaceOf(asKube(hr));
    (hr.spec?.rules ?? []).forEach((rule, i) => {
      for (const f of rule.filters ?? []) {
        if (f.type !== 'ExtensionRef' || !isRoutePolicyRef(f.extensionRef)) continue;
        const e = entries.get(`${ns}/${f.extensionRef?.name ?? ''}`);
        if (!e) continue; // the gateway translator answers 500 for a missing one
        const ruleRoutes = routes.filter((r) => isRouteOf(r.route, 'HTTPRoute', ns, hr.metadata?.name ?? '') && r.route.origin.rule === i).map((r) => r.route);
        const ref: RoutePolicyTargetRef = { group: GATEWAY_GROUP, kind: 'HTTPRoute', name: hr.metadata?.name ?? '', ...(rule.name ? { sectionName: rule.name } : {}) };
        // an ExtensionRef that cannot be honoured answers 500, as any unresolved filter
        if (e.resolved.kind === 'invalid') for (const r of ruleRoutes) failClosed.add(r);
        attach(e, { ref, level: LEVEL_EXTENSION, routes: ruleRoutes, key: `extension/${ns}/${ref.name}/${i}` }, ref);
      }
    });
  }

  for (const [route, levels] of perRoute) {
    const merged: RoutePolicies = { ...(route.policies ?? {}) };
    for (const p of levels) if (p) Object.assign(merged, p);
    route.policies = merged;
  }
  for (const route of failClosed) route.filters = [{ type: 'DirectResponse', statusCode: 500 }];

  const statuses: ObjectStatus[] = [...result.statuses];
  for (const e of entries.values()) statuses.push(statusOf(e, opts));
  statuses.sort((a, b) => compareStrings(refKey(a.ref), refKey(b.ref)));
  return { graph: result.graph, statuses };
}

function isRouteOf(r: HttpRoute, kind: KindName, ns: string, name: string): boolean {
  return isKind(r.source, kind) && (r.source.namespace ?? '') === ns && r.source.name === name;
}

/** findTarget resolves one targetRef to the graph routes it covers, or the reason it cannot. */
function findTarget(index: SnapshotIndex, ns: string, ref: RoutePolicyTargetRef, routes: { vhostListener: string; route: HttpRoute }[], listenerSource: Map<string, { kind: string; namespace?: string; name: string; section?: string }>): Target | PolicyProblem {
  const what = `${ref.kind} ${ns}/${ref.name}${ref.sectionName ? ` section ${ref.sectionName}` : ''}`;
  const notFound: PolicyProblem = { condition: 'Accepted', reason: 'TargetNotFound', message: `target ${what} not found` };
  const sameName = (o: { metadata?: { name?: string; namespace?: string } }): boolean => o.metadata?.name === ref.name && (o.metadata.namespace ?? 'default') === ns;
  if (isGroupKind(ref, 'Gateway')) {
    const gw = index.snapshot.gateways.find(sameName);
    if (!gw) return notFound;
    if (ref.sectionName !== undefined && !(gw.spec?.listeners ?? []).some((l) => l.name === ref.sectionName)) return notFound;
    const covered = routes.filter((r) => {
      const s = listenerSource.get(r.vhostListener);
      return s !== undefined && isKind(s, 'Gateway') && (s.namespace ?? '') === ns && s.name === ref.name && (ref.sectionName === undefined || s.section === ref.sectionName);
    });
    return { ref, level: ref.sectionName === undefined ? LEVEL_GATEWAY : LEVEL_LISTENER, routes: covered.map((r) => r.route) };
  }
  if (isGroupKind(ref, 'HTTPRoute')) {
    const hr = index.snapshot.httpRoutes.find(sameName);
    if (!hr) return notFound;
    let rule: number | undefined;
    if (ref.sectionName !== undefined) {
      rule = (hr.spec?.rules ?? []).findIndex((r) => r.name === ref.sectionName);
      if (rule < 0) return notFound;
    }
    const covered = routes.filter((r) => isRouteOf(r.route, 'HTTPRoute', ns, ref.name) && (rule === undefined || r.route.origin.rule === rule));
    return { ref, level: rule === undefined ? LEVEL_ROUTE : LEVEL_RULE, routes: covered.map((r) => r.route) };
  }
  if (isGroupKind(ref, 'Ingress')) {
    if (ref.sectionName !== undefined) return { condition: 'Accepted', reason: 'Invalid', message: `target ${what}: an Ingress has no sections` };
    if (!index.snapshot.ingresses.find(sameName)) return notFound;
    return { ref, level: LEVEL_ROUTE, routes: routes.filter((r) => isRouteOf(r.route, 'Ingress', ns, ref.name)).map((r) => r.route) };
  }
  return { condition: 'Accepted', reason: 'Invalid', message: `target ${ref.group}/${ref.kind} ${ref.name}: a RoutePolicy attaches to a gateway.networking.k8s.io Gateway or HTTPRoute, or a networking.k8s.io Ingress` };
}

function statusOf(e: Entry, opts: TranslateOptions): ObjectStatus {
  const gen = generationOf(e.obj);
  const ns = namespaceOf(e.obj);
  // ancestors[] is a map keyed by ancestorRef (GEP-713): one target reached twice (two unnamed rules'
  // ExtensionRefs, or a targetRef and an ExtensionRef) is one entry, a False condition winning.
  const byRef = new Map<string, { ancestorRef: Record<string, string>; controllerName: string; conditions: Condition[] }>();
  for (const a of e.ancestors) {
    const ancestorRef = { group: a.ref.group, kind: a.ref.kind, namespace: ns, name: a.ref.name, ...(a.ref.sectionName ? { sectionName: a.ref.sectionName } : {}) };
    const key = JSON.stringify(ancestorRef);
    const prior = byRef.get(key);
    if (!prior) byRef.set(key, { ancestorRef, controllerName: opts.gatewayControllerName, conditions: a.conditions });
    else
      for (const c of a.conditions) {
        const i = prior.conditions.findIndex((p) => p.type === c.type);
        if (i < 0) prior.conditions.push(c);
        else if (c.status === 'False' && prior.conditions[i]?.status !== 'False') prior.conditions[i] = c;
      }
  }
  const ancestors = [...byRef.values()];
  const events = e.ancestors.flatMap((a) => a.conditions.filter((c) => c.status === 'False').map((c) => warning(c.reason as PolicyProblem['reason'], `${a.ref.kind} ${a.ref.name}: ${c.message}`)));
  if (e.ancestors.length === 0 && e.resolved.kind === 'invalid') for (const p of e.resolved.problems) events.push(warning(p.reason, p.message));
  return {
    ref: { group: TUNA_GROUP, kind: 'RoutePolicy', namespace: ns, name: e.obj.metadata?.name ?? '' },
    ...(gen !== undefined ? { observedGeneration: gen } : {}),
    conditions: [],
    status: { ancestors },
    events,
  };
}
