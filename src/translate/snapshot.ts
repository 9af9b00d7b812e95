import { emptySnapshot } from './types.js';
import type { Snapshot } from './types.js';

type ListKey = Exclude<keyof Snapshot, never>;

/** Which snapshot list holds each `group/kind` (versions are accepted alike). */
const listOf: Record<string, ListKey> = {
  '/Namespace': 'namespaces',
  '/Service': 'services',
  '/Secret': 'secrets',
  'discovery.k8s.io/EndpointSlice': 'endpointSlices',
  'networking.k8s.io/IngressClass': 'ingressClasses',
  'networking.k8s.io/Ingress': 'ingresses',
  'gateway.networking.k8s.io/GatewayClass': 'gatewayClasses',
  'gateway.networking.k8s.io/Gateway': 'gateways',
  'gateway.networking.k8s.io/HTTPRoute': 'httpRoutes',
  'gateway.networking.k8s.io/GRPCRoute': 'grpcRoutes',
  'gateway.networking.k8s.io/TLSRoute': 'tlsRoutes',
  'gateway.networking.k8s.io/TCPRoute': 'tcpRoutes',
  'gateway.networking.k8s.io/ReferenceGrant': 'referenceGrants',
  'tuna.dev/Domain': 'domains',
  'tuna.dev/TCPPort': 'tcpPorts',
  'tuna.dev/Tunnel': 'tunnels',
};

/** apiGroupOf is the API group of an `apiVersion` (`networking.k8s.io/v1` → `networking.k8s.io`, `v1` → ''). */
export function apiGroupOf(apiVersion: string | undefined): string {
  const api = apiVersion ?? '';
  return api.includes('/') ? api.slice(0, api.indexOf('/')) : '';
}

/** snapshotKey returns the snapshot list an object belongs to, or undefined for kinds tuna ignores. */
export function snapshotKey(obj: { apiVersion?: string; kind?: string }): ListKey | undefined {
  return listOf[`${apiGroupOf(obj.apiVersion)}/${obj.kind ?? ''}`];
}

/**
 * snapshotFromObjects sorts plain objects (from YAML files or a watch cache) into a Snapshot.
 * Kinds tuna does not read are returned in `ignored`. Secret data is dropped here so that no key
 * material ever reaches a translator.
 */
export function snapshotFromObjects(objects: unknown[]): { snapshot: Snapshot; ignored: unknown[] } {
  const snapshot = emptySnapshot();
  const ignored: unknown[] = [];
  for (const obj of objects) {
    if (obj === null || typeof obj !== 'object') {
      ignored.push(obj);
      continue;
    }
    const o = obj as { apiVersion?: string; kind?: string };
    const key = snapshotKey(o);
    if (!key) {
      ignored.push(obj);
      continue;
    }
    const value = key === 'secrets' ? withoutSecretData(o) : o;
    (snapshot[key] as unknown[]).push(value);
  }
  return { snapshot, ignored };
}

function withoutSecretData(secret: Record<string, unknown>): unknown {
  const { data, stringData, ...rest } = secret;
  const keys = Object.keys({ ...(data as object | undefined), ...(stringData as object | undefined) });
  return { ...rest, dataKeys: keys.sort() };
}
