import type { Condition } from '../../model/index.js';
import { condition, warning } from '../common/status.js';
import type { ListenerSetContext, TranslationContext } from './context.js';
import { listenerProblems, listenerStatus } from './gateways.js';
import { asKube } from './kube-object.js';

/**
 * finishListenerSet writes a ListenerSet's status (after routes attached, so `attachedRoutes`
 * counts them): Accepted and Programmed with the ListenerSetConditionReason of Gateway API v1.6 —
 * NotAllowed, ParentNotAccepted or Invalid for the set as a whole (both conditions False, as the
 * conformance tests ListenerSetAllowedNamespace* read them), ListenersNotValid when no listener can
 * be served (False) or some cannot (Accepted=True), else Accepted and Programmed — and one
 * ListenerEntryStatus per listener, in the shape of a Gateway's ListenerStatus.
 */
export function finishListenerSet(ctx: TranslationContext, set: ListenerSetContext): void {
  const status = ctx.book.entry(asKube(set.obj), set.ref);
  const gen = set.generation;
  const conditions: Condition[] = [];
  const served = set.listeners.filter((l) => l.graph !== undefined);
  const bad = set.listeners.filter((l) => l.graph === undefined);
  if (set.rejected) {
    conditions.push(condition('Accepted', false, set.rejected.reason, set.rejected.message, gen));
    conditions.push(condition('Programmed', false, set.rejected.reason, set.rejected.message, gen));
    status.events.push(warning(set.rejected.reason, set.rejected.message));
  } else if (served.length === 0) {
    const message = 'no listener is valid';
    conditions.push(condition('Accepted', false, 'ListenersNotValid', message, gen));
    conditions.push(condition('Programmed', false, 'ListenersNotValid', message, gen));
  } else {
    const message =
      bad.length === 0 ? 'all listeners are accepted' : `listener(s) ${bad.map((l) => l.name).join(', ')} are not valid; serving ${served.map((l) => l.name).join(', ')}`;
    conditions.push(condition('Accepted', true, bad.length === 0 ? 'Accepted' : 'ListenersNotValid', message, gen));
    conditions.push(condition('Programmed', true, 'Programmed', `served on the address of Gateway ${set.gateway.namespace}/${set.gateway.name}`, gen));
  }
  for (const l of set.listeners) for (const p of listenerProblems(l)) status.events.push(warning(p.reason, `listener ${l.name}: ${p.message}`));
  status.status = { conditions, listeners: set.listeners.map((l) => listenerStatus(l, gen)) };
}
