/**
 * GatewayParameters configures the Gateways that name it: a GatewayClass's `spec.parametersRef`
 * (defaults for every Gateway of the class) or a Gateway's `spec.infrastructure.parametersRef` (that
 * Gateway only; its fields win over the class's, as GEP-1867 recommends). It holds only what tuna
 * honours per Gateway. See docs/crds.md and docs/dedicated-data-plane.md.
 */
import * as t from 'io-ts';
import { closedObject } from '../codec/index.js';
import { resourceCodec } from './resource.js';

/** MAX_TUNNEL_CONNECTIONS bounds `spec.tunnelConnections`: each one is a TLS connection per edge node per operator replica. */
export const MAX_TUNNEL_CONNECTIONS = 16;
/** MAX_DATA_PLANE_REPLICAS bounds `spec.deployment.replicas` (each pod holds the Gateway's tunnels). */
export const MAX_DATA_PLANE_REPLICAS = 32;
/** MAX_NODE_SELECTOR bounds the entries of `spec.deployment.nodeSelector`. */
export const MAX_NODE_SELECTOR = 32;
/** MAX_TOLERATIONS bounds `spec.deployment.tolerations`. */
export const MAX_TOLERATIONS = 32;

/** DATA_PLANES are the values of `spec.dataPlane`: the shared operator's pods, or pods of the Gateway's own. */
export const DATA_PLANES = ['Shared', 'Dedicated'] as const;

/** isTunnelConnections says whether n is a usable `spec.tunnelConnections` (an integer 1–MAX_TUNNEL_CONNECTIONS). */
export function isTunnelConnections(n: unknown): n is number {
  return typeof n === 'number' && Number.isInteger(n) && n >= 1 && n <= MAX_TUNNEL_CONNECTIONS;
}

/** boundedInt is an integer codec of [min, max]. */
function boundedInt(min: number, max: number): t.Type<number, number, unknown> {
  const is = (u: unknown): u is number => typeof u === 'number' && Number.isInteger(u) && u >= min && u <= max;
  return new t.Type<number, number, unknown>(`integer ${min}-${max}`, is, (u, c) => (is(u) ? t.success(u) : t.failure(u, c, `expected integer ${min}-${max}`)), t.identity);
}

const tunnelConnectionsCodec = boundedInt(1, MAX_TUNNEL_CONNECTIONS);

/** QUANTITY is a Kubernetes resource quantity (`100m`, `0.5`, `128Mi`, `1e3`), as the apiserver parses it. */
const QUANTITY = /^[+]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][-+]?[0-9]+|[KMGTPE]i|[mkMGTPE])?$/;

const quantityCodec = new t.Type<string, string, unknown>(
  'quantity',
  (u): u is string => typeof u === 'string' && QUANTITY.test(u),
  (u, c) => (typeof u === 'string' && QUANTITY.test(u) ? t.success(u) : t.failure(u, c, 'expected a quantity (as 100m, 0.5, 128Mi)')),
  t.identity,
);

/** a resource list: the three resources a pod of the data plane is sized by */
const resourceListCodec = closedObject('ResourceList', {}, { cpu: quantityCodec, memory: quantityCodec, 'ephemeral-storage': quantityCodec });

/** LABEL_VALUE is a label value (RFC 1123-ish: at most 63 characters, alphanumeric at both ends). */
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$/;
/** LABEL_KEY is a qualified label key: an optional DNS-subdomain prefix and a name of at most 63 characters. */
const LABEL_KEY = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;

const nodeSelectorCodec = new t.Type<Record<string, string>, Record<string, string>, unknown>(
  'NodeSelector',
  (u): u is Record<string, string> => typeof u === 'object' && u !== null && !Array.isArray(u),
  (u, c) => {
    if (typeof u !== 'object' || u === null || Array.isArray(u)) return t.failure(u, c, 'expected a map of label keys to values');
    const entries = Object.entries(u as Record<string, unknown>);
    if (entries.length > MAX_NODE_SELECTOR) return t.failure(u, c, `expected at most ${MAX_NODE_SELECTOR} entries`);
    const errors: t.Errors = [];
    for (const [k, v] of entries) {
      const at = t.appendContext(c, k, t.string, v);
      if (!LABEL_KEY.test(k) || k.length > 316) errors.push({ value: k, context: at, message: 'expected a label key' });
      else if (typeof v !== 'string' || !LABEL_VALUE.test(v)) errors.push({ value: v, context: at, message: 'expected a label value (at most 63 characters)' });
    }
    return errors.length > 0 ? t.failures(errors) : t.success(u as Record<string, string>);
  },
  t.identity,
);

const tolerationCodec = closedObject(
  'Toleration',
  {},
  {
    key: t.string,
    operator: t.keyof({ Exists: null, Equal: null }, '"Exists" | "Equal"'),
    value: t.string,
    effect: t.keyof({ NoSchedule: null, PreferNoSchedule: null, NoExecute: null }, '"NoSchedule" | "PreferNoSchedule" | "NoExecute"'),
    tolerationSeconds: boundedInt(0, 2 ** 31 - 1),
  },
);

const tolerationsCodec = new t.Type<t.TypeOf<typeof tolerationCodec>[], unknown, unknown>(
  'Tolerations',
  (u): u is t.TypeOf<typeof tolerationCodec>[] => Array.isArray(u) && u.length <= MAX_TOLERATIONS && u.every((x) => tolerationCodec.is(x)),
  (u, c) => {
    if (Array.isArray(u) && u.length > MAX_TOLERATIONS) return t.failure(u, c, `expected at most ${MAX_TOLERATIONS} tolerations`);
    return t.array(tolerationCodec).validate(u, c);
  },
  t.identity,
);

/** dataPlaneDeploymentCodec decodes `spec.deployment`: how the pods of a Dedicated data plane are run. */
export const dataPlaneDeploymentCodec = closedObject(
  'DataPlaneDeployment',
  {},
  {
    replicas: boundedInt(1, MAX_DATA_PLANE_REPLICAS),
    resources: closedObject('ResourceRequirements', {}, { limits: resourceListCodec, requests: resourceListCodec }),
    nodeSelector: nodeSelectorCodec,
    tolerations: tolerationsCodec,
  },
);

/** DataPlaneDeployment is the decoded `spec.deployment`. */
export type DataPlaneDeployment = t.TypeOf<typeof dataPlaneDeploymentCodec>;

const specFields = closedObject(
  'GatewayParametersSpec',
  {},
  {
    tunnelConnections: tunnelConnectionsCodec,
    dataPlane: t.keyof({ Shared: null, Dedicated: null }, '"Shared" | "Dedicated"'),
    deployment: dataPlaneDeploymentCodec,
  },
);

/**
 * gatewayParametersSpecCodec decodes `GatewayParameters.spec`. A `deployment` beside an explicit
 * `dataPlane: Shared` says two things at once and is refused (the shared operator's pods are the
 * chart's); beside no `dataPlane` it waits for a class's or Gateway's `Dedicated`.
 */
export const gatewayParametersSpecCodec = new t.Type<t.TypeOf<typeof specFields>, unknown, unknown>(
  'GatewayParametersSpec',
  specFields.is,
  (u, c) => {
    const decoded = specFields.validate(u, c);
    if (decoded._tag === 'Right' && decoded.right.dataPlane === 'Shared' && decoded.right.deployment !== undefined) {
      const deployment = decoded.right.deployment;
      return t.failure(deployment, t.appendContext(c, 'deployment', dataPlaneDeploymentCodec, deployment), 'deployment applies to dataPlane Dedicated only');
    }
    return decoded;
  },
  t.identity,
);

/** GatewayParametersSpec is the decoded `GatewayParameters.spec`. */
export type GatewayParametersSpec = t.TypeOf<typeof specFields>;

/** gatewayParametersCodec decodes a whole `tuna.dev/v1alpha1` GatewayParameters. */
export const gatewayParametersCodec = resourceCodec('GatewayParameters', gatewayParametersSpecCodec);

/** GatewayParameters is a decoded GatewayParameters object. */
export type GatewayParameters = t.TypeOf<typeof gatewayParametersCodec>;
