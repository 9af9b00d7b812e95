/**
 * The reconciler's share of Domain and TCPPort statuses (docs/translators/crd.md, "Status
 * ownership"): the translator leaves `Reserved` and `Ready` `Unknown`/`Pending`; what the edge
 * holds replaces them here, with the assigned port, and for a custom domain not verified yet the
 * TXT record to create (`status.verification`).
 */
import type { Condition, ObjectStatus } from '../model/index.js';
import { refKey } from '../model/index.js';
import { addEvent, condition, isKind, upsert, warning } from '../translate/index.js';
import { CRD_RESERVATION_REASONS } from './crd-reservations.js';
import type { CrdReport, HeldReservation } from './crd-reservations.js';

/**
 * correctReservationStatuses returns the statuses with each Domain's and TCPPort's `Reserved` and
 * `Ready` conditions said by the edge (and a Warning event where it refused or waits for DNS).
 * `statuses` is not modified.
 */
export function correctReservationStatuses(statuses: readonly ObjectStatus[], crd: CrdReport | undefined): ObjectStatus[] {
  if (crd === undefined || crd.held.length === 0) return [...statuses];
  const held = new Map(crd.held.map((h) => [refKey(h.source), h]));
  return statuses.map((s) => {
    const h = held.get(refKey(s.ref));
    if (h === undefined || s.status === undefined) return s;
    const out = structuredClone(s);
    applyHeld(out, h);
    return out;
  });
}

/** applyHeld writes one held reservation into its object's status. */
function applyHeld(s: ObjectStatus, h: HeldReservation): void {
  const body = s.status;
  if (body === undefined) return;
  const gen = s.observedGeneration;
  const reserved: Condition['status'] = h.state === 'reserved' ? 'True' : h.state === 'unverified' ? 'Unknown' : 'False';
  const ready = h.state === 'reserved';
  const readyReason = ready ? CRD_RESERVATION_REASONS.ready : h.reason;
  const readyMessage = ready ? (isKind(s.ref, 'Domain') ? `${h.message}; Tunnels and Ingresses may publish it` : `${h.message}; a Tunnel may use it`) : h.message;
  let conditions = listOf<Condition>(body.conditions);
  conditions = upsert(conditions, condition('Reserved', reserved, h.reason, h.message, gen));
  conditions = upsert(conditions, condition('Ready', ready ? 'True' : 'False', readyReason, readyMessage, gen));
  body.conditions = conditions;
  s.conditions = conditions.map((c) => ({ ...c }));
  if (isKind(s.ref, 'TCPPort') && h.value !== undefined && h.state !== 'refused') body.port = Number(h.value);
  if (h.verification !== undefined) body.verification = { type: 'TXT', name: h.verification.name, value: h.verification.value };
  if (h.state !== 'reserved') addEvent(s.events, warning(h.reason, h.message));
}

function listOf<T>(value: unknown): T[] {
  return Array.isArray(value) ? (value as T[]) : [];
}
