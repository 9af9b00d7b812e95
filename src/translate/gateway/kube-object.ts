import type { KubeObject } from '../common/meta.js';

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
