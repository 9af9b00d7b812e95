/**
 * Conditions and status bodies of tuna.dev objects. Ownership (docs/translators/crd.md): the
 * translator owns `Accepted` and the fields it derives from the spec; `Reserved` and `Ready` are
 * `False` when the object is not accepted (nothing will be reserved) and otherwise `Unknown` with
 * reason `Pending`, which the reconciler replaces with the edge's answer together with the
 * edge-assigned fields (`port`, `address`, `verification`, `connections`).
 */
import type { Condition, ObjectRef, ObjectStatus } from '../../model/index.js';
import type { KubeObject, StatusBook } from '../common/meta.js';
import { createdOf, namespaceOf } from '../common/meta.js';
import { condition, warning } from '../common/status.js';
import { TUNA_GROUP } from '../../crd/index.js';
import type { TunaReason } from '../common/reasons.js';
import type { FinalizedKind } from '../kinds.js';

/** ReservingKind is a tuna.dev kind whose status this translator writes: each holds a reservation (the finalized kinds of the table). */
export type ReservingKind = FinalizedKind;

/** Problem is a user mistake: a status reason and a message saying what to change. */
export interface Problem {
  reason: TunaReason;
  message: string;
}

/** crdRef is the ObjectRef of a tuna.dev object; a missing namespace is `default`, as the API server would set it. */
export function crdRef(obj: KubeObject, kind: ReservingKind): ObjectRef {
  return { group: TUNA_GROUP, kind, namespace: namespaceOf(obj), name: obj.metadata?.name ?? '' };
}

/** crdKey is `<namespace>/<name>` of a tuna.dev object. */
export function crdKey(obj: KubeObject): string {
  return `${namespaceOf(obj)}/${obj.metadata?.name ?? ''}`;
}

/** Reservation kinds say Reserved; a Tunnel reserves nothing of its own. */
function conditionTypes(kind: ReservingKind): string[] {
  return kind === 'Tunnel' ? ['Accepted', 'Ready'] : ['Accepted', 'Reserved', 'Ready'];
}

function finish(status: ObjectStatus, conditions: Condition[], fields: Record<string, unknown>): void {
  status.conditions = conditions;
  status.status = {
    ...(status.observedGeneration !== undefined ? { observedGeneration: status.observedGeneration } : {}),
    // A copy: the body is serialised on its own and must not share the array merge appends to.
    conditions: conditions.map((c) => ({ ...c })),
    ...fields,
  };
}

/** rejectObject marks an object not accepted: every condition False with the problem, and a Warning event. */
export function rejectObject(book: StatusBook, obj: KubeObject, kind: ReservingKind, problem: Problem, fields: Record<string, unknown> = {}): void {
  const status = book.entry(obj, crdRef(obj, kind));
  const gen = status.observedGeneration;
  finish(
    status,
    conditionTypes(kind).map((type) => condition(type, false, problem.reason, problem.message, gen)),
    fields,
  );
  status.events.push(warning(problem.reason, problem.message));
}

/** acceptObject marks an object accepted; Reserved and Ready wait for the reconciler (`Unknown`, `Pending`). */
export function acceptObject(
  book: StatusBook,
  obj: KubeObject,
  kind: ReservingKind,
  message: string,
  pending: string,
  fields: Record<string, unknown>,
): void {
  const status = book.entry(obj, crdRef(obj, kind));
  const gen = status.observedGeneration;
  finish(
    status,
    conditionTypes(kind).map((type) =>
      type === 'Accepted' ? condition(type, true, 'Accepted', message, gen) : condition(type, 'Unknown', 'Pending', pending, gen),
    ),
    fields,
  );
}

/**
 * byAge orders objects oldest first, then by `namespace/name`: who keeps a contested hostname or
 * port. Objects without a timestamp (manifest files) count as newest, as in mergeFragments.
 */
export function byAge(a: KubeObject, b: KubeObject): number {
  const ca = createdOf(a);
  const cb = createdOf(b);
  if (ca !== cb) {
    if (ca === '') return 1;
    if (cb === '') return -1;
    return ca < cb ? -1 : 1;
  }
  const ka = crdKey(a);
  const kb = crdKey(b);
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}
