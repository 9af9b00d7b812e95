/**
 * tuna.dev/v1alpha1 custom resources: Domain, TCPPort, Tunnel.
 * PROVISIONAL shapes — the CRD work replaces these with io-ts codecs and the types derived from them.
 */
import type { V1ObjectMeta } from '@kubernetes/client-node';

/** ReclaimPolicy of a reservation. */
export type CrdReclaimPolicy = 'Delete' | 'Retain';

/** Domain reserves a subdomain of the edge's base domain or a custom domain. */
export interface Domain {
  apiVersion: 'tuna.dev/v1alpha1';
  kind: 'Domain';
  metadata: V1ObjectMeta;
  spec: { name: string; reclaimPolicy?: CrdReclaimPolicy };
  status?: Record<string, unknown>;
}

/** TCPPort reserves a TCP port at the edge (a specific one, or any from the pool). */
export interface TCPPort {
  apiVersion: 'tuna.dev/v1alpha1';
  kind: 'TCPPort';
  metadata: V1ObjectMeta;
  spec: { port?: number; reclaimPolicy?: CrdReclaimPolicy };
  status?: Record<string, unknown>;
}

/** Tunnel publishes one Service of its namespace without an Ingress. */
export interface Tunnel {
  apiVersion: 'tuna.dev/v1alpha1';
  kind: 'Tunnel';
  metadata: V1ObjectMeta;
  spec: { service: { name: string; port: number | string }; protocol: 'http' | 'tcp' | 'tls'; domain?: string; tcpPort?: string };
  status?: Record<string, unknown>;
}
