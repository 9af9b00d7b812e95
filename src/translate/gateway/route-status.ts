import type { Condition } from '../../model/index.js';
import { condition, warning } from '../common/status.js';
import type { KubeObject } from '../common/meta.js';
import type { ParentAttachment } from './attachment.js';
import type { Problem, TranslationContext } from './context.js';
import type { RouteKind } from './kinds.js';
import { namespacedRefOf } from './kube-object.js';

/** RouteVerdict is what translating a route's own spec found, independent of its parents. */
export interface RouteVerdict {
  /** the whole route is invalid: Accepted=False for every parent */
  invalid?: Problem;
  /** some rules were dropped: PartiallyInvalid=True with this message (starts with "Dropped Rule") */
  partial?: string;
  /** unresolved references: ResolvedRefs=False with the first reason, all messages */
  unresolved: Problem[];
}

/** isAttached says whether a parent accepted the route (so it counts and reaches the graph). */
export function isAttached(p: ParentAttachment, verdict: RouteVerdict): boolean {
  return p.problem === undefined && verdict.invalid === undefined;
}

/**
 * writeRouteStatus records `status.parents` (RouteParentStatus per parentRef naming a tuna Gateway:
 * parentRef, controllerName, Accepted, ResolvedRefs and, for partially invalid routes,
 * PartiallyInvalid, all with observedGeneration) and counts the route on each listener it attached to.
 */
export function writeRouteStatus(
  ctx: TranslationContext,
  obj: KubeObject,
  kind: RouteKind,
  parents: ParentAttachment[],
  verdict: RouteVerdict,
): void {
  if (parents.length === 0) return;
  const ref = namespacedRefOf(obj, kind);
  const status = ctx.book.entry(obj, ref);
  const gen = obj.metadata?.generation;
  const key = `${kind}/${ref.namespace ?? ''}/${ref.name}`;
  const entries = parents.map((p) => {
    const conditions: Condition[] = [];
    const problem = p.problem ?? verdict.invalid;
    if (problem) conditions.push(condition('Accepted', false, problem.reason, problem.message, gen));
    else {
      conditions.push(condition('Accepted', true, 'Accepted', 'route is accepted', gen));
      for (const a of p.listeners) a.listener.attached.add(key);
    }
    const first = verdict.unresolved[0];
    conditions.push(
      first
        ? condition('ResolvedRefs', false, first.reason, verdict.unresolved.map((u) => u.message).join('; '), gen)
        : condition('ResolvedRefs', true, 'ResolvedRefs', 'all references are resolved', gen),
    );
    if (!problem && verdict.partial) conditions.push(condition('PartiallyInvalid', true, 'UnsupportedValue', verdict.partial, gen));
    return { parentRef: p.parentRef, controllerName: ctx.controllerName, conditions };
  });
  status.status = { parents: entries };
  const messages = new Set<string>();
  const problems = [...parents.flatMap((p) => [p.problem, ...(p.lost ?? [])]), verdict.invalid, ...verdict.unresolved].filter(
    (p): p is Problem => p !== undefined,
  );
  for (const p of problems) {
    if (messages.has(p.message)) continue;
    messages.add(p.message);
    status.events.push(warning(p.reason, p.message));
  }
  if (verdict.partial) status.events.push(warning('PartiallyInvalid', verdict.partial));
}
