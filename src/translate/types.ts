import type { ObjectRef, ObjectStatus, RouteGraph } from '../model/index.js';

export type { Snapshot } from './kinds.js';
export { emptySnapshot } from './kinds.js';

/** TranslateOptions are the operator's settings that change translation. */
export interface TranslateOptions {
  /** the edge's base domain: generated hostnames are `<name>-<namespace>.<baseDomain>` */
  baseDomain: string;
  ingressClassName: string;
  ingressControllerName: string;
  gatewayControllerName: string;
  loadBalancerClass: string;
}

/** defaultTranslateOptions are tuna's documented defaults. */
export const defaultTranslateOptions: TranslateOptions = {
  baseDomain: 'tuna.example',
  ingressClassName: 'tuna',
  ingressControllerName: 'tuna.dev/ingress-controller',
  gatewayControllerName: 'tuna.dev/gateway-controller',
  loadBalancerClass: 'tuna',
};

/**
 * HostClaim says that an object wants a hostname on the edge's shared HTTP(S) listeners for one of
 * its fragment's bindings. Claims of one fragment group never conflict with each other (several
 * Ingresses merge on one host); claims of different groups on one hostname do.
 */
export interface HostClaim {
  hostname: string;
  bindingId: string;
  owner: ObjectRef;
  /** the owner's creation timestamp (RFC 3339); the oldest claim wins */
  created: string;
}

/**
 * Fragment is the part of the graph one claim group contributes: all Ingresses of class tuna form
 * one group (`ingress`); each Service, Gateway and Tunnel is a group of its own.
 */
export interface Fragment {
  group: string;
  graph: RouteGraph;
  claims: HostClaim[];
}

/** TranslatorOutput is what each per-kind translator returns. */
export interface TranslatorOutput {
  fragments: Fragment[];
  statuses: ObjectStatus[];
}

/** TranslateResult is the whole translation: one canonical graph and every object's status. */
export interface TranslateResult {
  graph: RouteGraph;
  statuses: ObjectStatus[];
}
