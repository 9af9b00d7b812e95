/**
 * Gateway parameters (GEP-1867): a GatewayClass's `spec.parametersRef` and a Gateway's
 * `spec.infrastructure.parametersRef` may name a tuna.dev GatewayParameters. A reference to any other
 * kind, to one that does not exist or to one that does not decode is a user mistake with reason
 * InvalidParameters (GatewayClassReasonInvalidParameters, GatewayReasonInvalidParameters: "the
 * parametersRef field is invalid, with an unsupported value, or a reference to a resource that
 * does not exist"). The class's fields are defaults its Gateways' own fields override, as the
 * GEP recommends ("GatewayClass provides defaults that can be overridden by a Gateway").
 */
import { TUNA_GROUP, decodeGatewayParameters } from '../../crd/index.js';
import type { GatewayParameters, GatewayParametersSpec } from '../../crd/index.js';
import { compareStrings, stableStringify } from '../../model/index.js';
import { nameKey } from '../common/meta.js';
import type { KubeObject } from '../common/meta.js';

/** PARAMETERS_KIND is the one kind tuna reads as Gateway parameters. */
export const PARAMETERS_KIND = 'GatewayParameters';

/** ParametersRef is a GatewayClass's ParametersReference or a Gateway's LocalParametersReference (no namespace). */
export interface ParametersRef {
  group?: string;
  kind?: string;
  name?: string;
  namespace?: string;
}

/** ParametersIndex finds GatewayParameters by `<namespace>/<name>`. */
export type ParametersIndex = ReadonlyMap<string, GatewayParameters>;

/** Resolved is the spec a reference named, or why it cannot be used. */
export type Resolved = { ok: true; spec: GatewayParametersSpec } | { ok: false; message: string };

/**
 * indexParameters maps the snapshot's GatewayParameters by namespace and name. Of two objects with
 * one name (manifest files can hold both) the one that serialises first wins, so the choice never
 * depends on input order.
 */
export function indexParameters(objects: readonly GatewayParameters[]): ParametersIndex {
  const map = new Map<string, GatewayParameters>();
  for (const obj of objects) {
    const key = nameKey(obj as unknown as KubeObject);
    const prior = map.get(key);
    if (prior === undefined || compareStrings(stableStringify(obj), stableStringify(prior)) < 0) map.set(key, obj);
  }
  return map;
}

/**
 * resolveParameters looks a reference up. `field` names it in messages (`parametersRef`,
 * `infrastructure.parametersRef`); `namespace` is where a Gateway's reference points (a class's
 * reference must carry its own, as GatewayParameters is namespaced).
 */
export function resolveParameters(index: ParametersIndex, ref: ParametersRef, field: string, namespace?: string): Resolved {
  const what = `${field} ${ref.group ?? ''}/${ref.kind ?? ''} ${ref.name ?? ''}`;
  if (ref.group !== TUNA_GROUP || ref.kind !== PARAMETERS_KIND)
    return { ok: false, message: `${what} is not supported: tuna reads parameters of kind ${TUNA_GROUP}/${PARAMETERS_KIND} only` };
  const ns = namespace ?? ref.namespace;
  if (ns === undefined || ns === '') return { ok: false, message: `${what} names no namespace: ${PARAMETERS_KIND} is namespaced` };
  const obj = index.get(`${ns}/${ref.name ?? ''}`);
  if (obj === undefined) return { ok: false, message: `${what}: ${PARAMETERS_KIND} ${ns}/${ref.name ?? ''} not found` };
  const decoded = decodeGatewayParameters(obj);
  if (!decoded.ok) return { ok: false, message: `${what}: ${PARAMETERS_KIND} ${ns}/${ref.name ?? ''} is malformed: ${decoded.errors.join('; ')}` };
  return { ok: true, spec: decoded.value.spec };
}

/**
 * mergeParameters is a Gateway's effective parameters: its own fields over its class's defaults.
 * `deployment` merges field by field (a Gateway setting only `replicas` keeps its class's
 * `nodeSelector`); each of its fields is replaced whole.
 */
export function mergeParameters(classSpec: GatewayParametersSpec | undefined, gatewaySpec: GatewayParametersSpec | undefined): GatewayParametersSpec {
  const merged = { ...classSpec, ...gatewaySpec };
  if (classSpec?.deployment !== undefined && gatewaySpec?.deployment !== undefined) merged.deployment = { ...classSpec.deployment, ...gatewaySpec.deployment };
  return merged;
}
