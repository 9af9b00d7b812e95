/**
 * Merging the status tuna computed with the status an object already has: the pure part of the
 * status writer. Translators have no clock and know nothing of other controllers; this adds
 * `lastTransitionTime` (kept while a condition's status holds, per metav1.Condition) and keeps
 * the `status.parents` entries of other controllers (Gateway API: each controller owns only its
 * own entries, told apart by `controllerName`).
 */

type Json = Record<string, unknown>;

interface TimedCondition {
  type: string;
  status: string;
  lastTransitionTime?: unknown;
  [key: string]: unknown;
}

/** MergeOptions name tuna's controller and the time to stamp on conditions that changed. */
export interface MergeOptions {
  /** tuna's `controllerName` in route `status.parents` */
  controllerName: string;
  /** RFC 3339, whole seconds */
  now: string;
}

/** rfc3339Seconds formats a date the way the API server stores metav1.Time. */
export function rfc3339Seconds(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * mergeStatus returns the status body to write: `desired` with every condition stamped (at the
 * top, in `listeners[]` matched by name, in `parents[]` and `ancestors[]` matched by ref) and, for routes,
 * the current `parents` of other controllers kept ahead of tuna's.
 */
export function mergeStatus(current: Json | undefined, desired: Json, options: MergeOptions): Json {
  const out: Json = structuredClone(desired);
  if (Array.isArray(out.conditions)) out.conditions = stamp(out.conditions as TimedCondition[], current?.conditions, options.now);
  if (Array.isArray(out.listeners)) {
    const before = listOf(current?.listeners);
    out.listeners = (out.listeners as Json[]).map((l) => {
      const prior = before.find((p) => p.name === l.name);
      return Array.isArray(l.conditions) ? { ...l, conditions: stamp(l.conditions as TimedCondition[], prior?.conditions, options.now) } : l;
    });
  }
  if (Array.isArray(out.parents)) {
    const before = listOf(current?.parents);
    const ours = (out.parents as Json[]).map((p) => {
      const prior = before.find((q) => q.controllerName === options.controllerName && sameJson(q.parentRef, p.parentRef));
      return Array.isArray(p.conditions) ? { ...p, conditions: stamp(p.conditions as TimedCondition[], prior?.conditions, options.now) } : p;
    });
    const theirs = before.filter((q) => q.controllerName !== options.controllerName);
    out.parents = [...theirs, ...ours];
  }
  // A policy's `ancestors[]` (GEP-713 PolicyAncestorStatus: RoutePolicy, BackendTLSPolicy): stamped like route
  // parents, matched by ancestorRef; other controllers' entries are kept ahead of tuna's, as for route parents.
  if (Array.isArray(out.ancestors)) {
    const before = listOf(current?.ancestors);
    const ours = (out.ancestors as Json[]).map((a) => {
      const prior = before.find((q) => q.controllerName === a.controllerName && sameJson(q.ancestorRef, a.ancestorRef));
      return Array.isArray(a.conditions) ? { ...a, conditions: stamp(a.conditions as TimedCondition[], prior?.conditions, options.now) } : a;
    });
    const theirs = before.filter((q) => q.controllerName !== options.controllerName);
    out.ancestors = [...theirs, ...ours];
  }
  return out;
}

/**
 * statusDiffers tells whether writing `merged` would change `current`: only the fields tuna
 * writes are compared (a merge patch leaves the others alone), timestamps as the API stores them,
 * and a `null` (a merge patch's delete) or an empty list equals an absent field.
 */
export function statusDiffers(current: Json | undefined, merged: Json): boolean {
  for (const key of Object.keys(merged)) if (!sameJson(current?.[key], merged[key])) return true;
  return false;
}

/**
 * mergePatchOf is the JSON merge patch (RFC 7386) that turns `current` into `merged` for the
 * fields tuna writes: a key of a nested object that `merged` no longer has becomes `null`, since a
 * merge patch only deletes what it names (`loadBalancer: {}` alone would leave every old
 * `ingress` entry in place). Top-level fields tuna does not write are left alone; arrays and
 * `null` (delete) are sent as they are.
 */
export function mergePatchOf(current: Json | undefined, merged: Json): Json {
  const out: Json = {};
  for (const [key, value] of Object.entries(merged)) out[key] = patchValue(current?.[key], value);
  return out;
}

function patchValue(current: unknown, desired: unknown): unknown {
  if (!isPlainObject(desired) || !isPlainObject(current)) return desired;
  const out: Json = {};
  for (const [key, value] of Object.entries(desired)) out[key] = patchValue(current[key], value);
  for (const key of Object.keys(current)) if (!(key in desired) && current[key] !== undefined && current[key] !== null) out[key] = null;
  return out;
}

function isPlainObject(value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Date);
}

function stamp(conditions: TimedCondition[], before: unknown, now: string): TimedCondition[] {
  const prior = listOf(before) as TimedCondition[];
  return conditions.map((c) => {
    const old = prior.find((p) => p.type === c.type);
    const kept = old !== undefined && old.status === c.status && old.lastTransitionTime !== undefined;
    return { ...c, lastTransitionTime: kept ? timeText(old.lastTransitionTime) : now };
  });
}

function listOf(value: unknown): Json[] {
  return Array.isArray(value) ? (value as Json[]) : [];
}

/** timeText turns a metav1.Time the client library may have parsed into a Date back into text. */
function timeText(value: unknown): unknown {
  return value instanceof Date ? rfc3339Seconds(value) : value;
}

/** sameJson compares two JSON values regardless of key order (Dates as the API writes them). */
export function sameJson(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}

function canonical(value: unknown): string {
  return JSON.stringify(normalize(value));
}

/** normalize: `null` and `[]` count as absent (a merge patch's delete; Kubernetes omits empty lists). */
function normalize(value: unknown): unknown {
  if (value === null || (Array.isArray(value) && value.length === 0)) return undefined;
  if (value instanceof Date) return rfc3339Seconds(value);
  if (Array.isArray(value)) return value.map(normalize);
  if (value !== null && typeof value === 'object') {
    const out: Json = {};
    for (const key of Object.keys(value).sort()) {
      const v = normalize((value as Json)[key]);
      if (v !== undefined) out[key] = v;
    }
    return out;
  }
  return value;
}
