/**
 * The status kit: how every part of tuna that writes a status builds it, the translators and the
 * operator alike. Conditions and Events take a reason of the tables (./reasons.ts), so a misspelt
 * or invented reason does not compile; a list holds one condition per type (Gateway API v1
 * `Condition`: "the type of condition in CamelCase", listed as a map keyed by type).
 */
import type { Condition, StatusEvent } from '../../model/index.js';
import type { ConditionReason } from './reasons.js';

export { GATEWAY_REASONS, TUNA_REASONS } from './reasons.js';
export type { ConditionReason, GatewayReason, TunaReason } from './reasons.js';

/** ConditionStatus is a condition's status: a boolean for True or False, or the status as written. */
export type ConditionStatus = boolean | Condition['status'];

/** condition builds a Condition (observedGeneration only when known). */
export function condition(type: string, status: ConditionStatus, reason: ConditionReason, message: string, observedGeneration?: number): Condition {
  return {
    type,
    status: typeof status === 'boolean' ? (status ? 'True' : 'False') : status,
    reason,
    message,
    ...(observedGeneration !== undefined ? { observedGeneration } : {}),
  };
}

/** upsert returns the list with the condition of the same type replaced, or appended; `list` is not modified. */
export function upsert(list: readonly Condition[], next: Condition): Condition[] {
  const at = list.findIndex((c) => c.type === next.type);
  return at >= 0 ? list.map((c, i) => (i === at ? next : c)) : [...list, next];
}

/** upsertInPlace replaces the condition of the same type in `list`, or appends it. */
export function upsertInPlace(list: Condition[], next: Condition): void {
  const at = list.findIndex((c) => c.type === next.type);
  if (at >= 0) list[at] = next;
  else list.push(next);
}

/** warning builds a Warning event (a problem the user must fix). */
export function warning(reason: ConditionReason, message: string): StatusEvent {
  return { type: 'Warning', reason, message };
}

/** normal builds a Normal event (something done that the user should know of). */
export function normal(reason: ConditionReason, message: string): StatusEvent {
  return { type: 'Normal', reason, message };
}

/** addEvent appends an event unless `events` already has one of the same reason and message. */
export function addEvent(events: StatusEvent[], event: StatusEvent): void {
  if (!events.some((e) => e.reason === event.reason && e.message === event.message)) events.push(event);
}
