import type { ObjectRef } from '../../model/index.js';
import { namespaceOf, refOf } from '../common/meta.js';
import type { KubeObject } from '../common/meta.js';
import { GATEWAY_GROUP } from './kinds.js';
import type { KindName } from '../kinds.js';

/** GatewayApiObject is any @kubernetes-models/gateway-api object (string timestamps in its metadata). */
export interface GatewayApiObject {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; generation?: number; creationTimestamp?: string };
}

/**
 * asKube views a Gateway API model object as the common KubeObject. The two metadata types differ
 * only in how creationTimestamp is typed (string in the Gateway API models, Date in client-node),
 * and createdOf accepts both at run time.
 */
export function asKube(obj: GatewayApiObject): KubeObject {
  return obj as unknown as KubeObject;
}

/**
 * namespacedRefOf is the ObjectRef of a namespaced Gateway API object, with the namespace defaulted
 * to `default` as the API server would, so ids, claims and statuses agree on it.
 */
export function namespacedRefOf(obj: KubeObject, kind: KindName): ObjectRef {
  return { ...refOf(obj, kind, GATEWAY_GROUP), namespace: namespaceOf(obj) };
}
