/**
 * The objects of a Gateway's dedicated data plane (GatewayParameters `dataPlane: Dedicated`,
 * docs/dedicated-data-plane.md), as pure functions of the Gateway, its binding and its key: a
 * ServiceAccount, a ClusterRoleBinding of it to the chart's read-only data-plane ClusterRole, a
 * Secret with the binding's tunnel key, and a Deployment running the operator's image as
 * `tuna operator --data-plane-for <namespace>/<gateway>`.
 *
 * Each is labelled `gateway.networking.k8s.io/gateway-name=<gateway>` (Gateway API's label of the
 * resources made for a Gateway) and with the Gateway's `spec.infrastructure.labels`, annotated with
 * its `spec.infrastructure.annotations` (GEP-1867), the pod template too. The namespaced ones are
 * owned by the Gateway, so deleting it deletes them; the ClusterRoleBinding cannot be (a
 * cluster-scoped object may not name a namespaced owner) and is deleted by the operator.
 */
import { createHash } from 'node:crypto';
import type { V1ClusterRoleBinding, V1Deployment, V1OwnerReference, V1Secret, V1ServiceAccount } from '@kubernetes/client-node';
import type { DedicatedDataPlane } from '../model/index.js';

/** GATEWAY_NAME_LABEL is Gateway API's label of the resources an implementation made for a Gateway. */
export const GATEWAY_NAME_LABEL = 'gateway.networking.k8s.io/gateway-name';
/** DATA_PLANE_LABEL marks every object of a dedicated data plane (its value: `<namespace>.<gateway>` cannot be a label value past 63 characters, so it is `true`). */
export const DATA_PLANE_LABEL = 'tuna.dev/data-plane';
/** GATEWAY_NAMESPACE_LABEL names the Gateway's namespace on the cluster-scoped ClusterRoleBinding. */
export const GATEWAY_NAMESPACE_LABEL = 'tuna.dev/gateway-namespace';
/** KEY_ID_ANNOTATION on the pod template is the id of the tunnel key the pods hold: a new key rolls them. */
export const KEY_ID_ANNOTATION = 'tuna.dev/tunnel-key-id';
/** the names of the Secret's entries */
export const SECRET_KEYS = { token: 'token', keyId: 'key-id', binding: 'binding', ca: 'ca.crt' } as const;
/** the data plane's health port in its pods (/healthz, /readyz, /metrics) */
export const DATA_PLANE_HEALTH_PORT = 9090;
/** MAX_LABEL_VALUE: a Gateway named longer cannot be the value of the gateway-name label. */
const MAX_LABEL_VALUE = 63;

/** DataPlaneGateway is what the objects take from the Gateway. */
export interface DataPlaneGateway {
  namespace: string;
  name: string;
  uid: string;
  /** `spec.infrastructure.labels` */
  labels?: Readonly<Record<string, string>>;
  /** `spec.infrastructure.annotations` */
  annotations?: Readonly<Record<string, string>>;
}

/** DataPlaneSettings are the operator's, the same for every Gateway. */
export interface DataPlaneSettings {
  /** the image the pods run: the operator's own */
  image: string;
  /** the read-only ClusterRole the pods' ServiceAccount is bound to (the chart's, config/rbac) */
  clusterRole: string;
  /** the edge's tunnel endpoint as the pods reach it, `[tls://|tcp://]HOST:PORT` */
  edge: string;
  /** the edge's CA (PEM), when its certificate is not publicly trusted */
  ca?: string;
  clusterId: string;
  baseDomain: string;
  /** tunnel connections per edge each pod holds when the binding names none */
  connections: number;
}

/** DataPlaneKey is the binding's tunnel key, as the reconciler holds it. */
export interface DataPlaneKey {
  keyId: string;
  token: string;
  /** the edge's binding id (`binding/address/<ip>`) */
  edgeBindingId: string;
}

/** DataPlaneObjects are the objects of one Gateway's data plane. */
export interface DataPlaneObjects {
  serviceAccount: V1ServiceAccount;
  clusterRoleBinding: V1ClusterRoleBinding;
  secret: V1Secret;
  deployment: V1Deployment;
}

/** dataPlaneName is the name of a Gateway's ServiceAccount and Deployment. */
export function dataPlaneName(gateway: string): string {
  return `tuna-gw-${gateway}`;
}

/** dataPlaneSecretName is the name of the Secret holding a Gateway's tunnel key. */
export function dataPlaneSecretName(gateway: string): string {
  return `tuna-gw-${gateway}-key`;
}

/**
 * dataPlaneBindingName is the name of a Gateway's ClusterRoleBinding: cluster-wide, so it names the
 * namespace; a long one is cut and made unique by a hash (a name is at most 253 characters).
 */
export function dataPlaneBindingName(namespace: string, gateway: string): string {
  const whole = `tuna-gw-${namespace}-${gateway}`;
  if (whole.length <= 253) return whole;
  const hash = createHash('sha256').update(`${namespace}/${gateway}`).digest('hex').slice(0, 10);
  return `${whole.slice(0, 242)}-${hash}`;
}

/** dataPlaneProblem says why a Gateway cannot have a dedicated data plane (undefined: it can). */
export function dataPlaneProblem(gateway: Pick<DataPlaneGateway, 'name'>): string | undefined {
  if (gateway.name.length > MAX_LABEL_VALUE)
    return `a dedicated data plane needs the Gateway's name as the value of the ${GATEWAY_NAME_LABEL} label, at most ${MAX_LABEL_VALUE} characters; ${gateway.name.length} is too long`;
  return dataPlaneName(gateway.name).length > 253 - 16 ? `the Gateway's name is too long for its Deployment's pods` : undefined;
}

/** selectorLabels select a Gateway's pods (never the infrastructure labels: a Deployment's selector cannot change). */
export function selectorLabels(gateway: Pick<DataPlaneGateway, 'name'>): Record<string, string> {
  return { [GATEWAY_NAME_LABEL]: gateway.name, [DATA_PLANE_LABEL]: 'true' };
}

/**
 * labelsOf are the labels of every object: the infrastructure labels, then tuna's (which win: a
 * Gateway's labels cannot move its objects out of their selector or out of the operator's sight).
 */
function labelsOf(gw: DataPlaneGateway): Record<string, string> {
  return { ...gw.labels, ...selectorLabels(gw), 'app.kubernetes.io/name': 'tuna-data-plane', 'app.kubernetes.io/managed-by': 'tuna' };
}

function ownerOf(gw: DataPlaneGateway): V1OwnerReference {
  return { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', name: gw.name, uid: gw.uid, controller: true };
}

function metaOf(gw: DataPlaneGateway, name: string): { name: string; namespace: string; labels: Record<string, string>; annotations?: Record<string, string>; ownerReferences: V1OwnerReference[] } {
  const annotations = gw.annotations !== undefined && Object.keys(gw.annotations).length > 0 ? { annotations: { ...gw.annotations } } : {};
  return { name, namespace: gw.namespace, labels: labelsOf(gw), ...annotations, ownerReferences: [ownerOf(gw)] };
}

/** dataPlaneObjects builds the four objects of a Gateway's data plane (dataPlaneProblem must say none). */
export function dataPlaneObjects(gw: DataPlaneGateway, dedicated: DedicatedDataPlane, connections: number | undefined, key: DataPlaneKey, settings: DataPlaneSettings): DataPlaneObjects {
  const name = dataPlaneName(gw.name);
  const secretName = dataPlaneSecretName(gw.name);
  const serviceAccount: V1ServiceAccount = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: metaOf(gw, name), automountServiceAccountToken: true };
  const { ownerReferences: _owner, namespace: _ns, ...clusterMeta } = metaOf(gw, dataPlaneBindingName(gw.namespace, gw.name));
  const clusterRoleBinding: V1ClusterRoleBinding = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { ...clusterMeta, labels: { ...clusterMeta.labels, [GATEWAY_NAMESPACE_LABEL]: gw.namespace } },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: settings.clusterRole },
    subjects: [{ kind: 'ServiceAccount', name, namespace: gw.namespace }],
  };
  const secret: V1Secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: metaOf(gw, secretName),
    type: 'Opaque',
    stringData: {
      [SECRET_KEYS.token]: key.token,
      [SECRET_KEYS.keyId]: key.keyId,
      [SECRET_KEYS.binding]: key.edgeBindingId,
      ...(settings.ca !== undefined ? { [SECRET_KEYS.ca]: settings.ca } : {}),
    },
  };
  return { serviceAccount, clusterRoleBinding, secret, deployment: deploymentOf(gw, dedicated, connections ?? settings.connections, key, settings) };
}

function deploymentOf(gw: DataPlaneGateway, dedicated: DedicatedDataPlane, connections: number, key: DataPlaneKey, settings: DataPlaneSettings): V1Deployment {
  const name = dataPlaneName(gw.name);
  const secretRef = (k: string) => ({ valueFrom: { secretKeyRef: { name: dataPlaneSecretName(gw.name), key: k } } });
  const args = [
    'operator',
    `--data-plane-for=${gw.namespace}/${gw.name}`,
    `--edge=${settings.edge}`,
    ...(settings.ca !== undefined ? [`--ca=/etc/tuna/data-plane/${SECRET_KEYS.ca}`] : []),
    `--connections=${connections}`,
    `--cluster-id=${settings.clusterId}`,
    `--base-domain=${settings.baseDomain}`,
    `--health-addr=:${DATA_PLANE_HEALTH_PORT}`,
    '--log-format=json',
  ];
  const restricted = { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: metaOf(gw, name),
    spec: {
      replicas: dedicated.replicas ?? 1,
      selector: { matchLabels: selectorLabels(gw) },
      // a new pod turns ready only with its tunnels up (/readyz), and no old pod stops before
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
      template: {
        metadata: {
          labels: labelsOf(gw),
          // the key the pods read at start: a new key (a rotation) rolls them
          annotations: { ...gw.annotations, [KEY_ID_ANNOTATION]: key.keyId },
        },
        spec: {
          serviceAccountName: name,
          automountServiceAccountToken: true,
          securityContext: { ...restricted, runAsUser: 65532, runAsGroup: 65532 },
          containers: [
            {
              name: 'data-plane',
              image: settings.image,
              args,
              env: [
                { name: 'TUNA_KEY', ...secretRef(SECRET_KEYS.token) },
                { name: 'TUNA_DATA_PLANE_KEY_ID', ...secretRef(SECRET_KEYS.keyId) },
                { name: 'TUNA_DATA_PLANE_BINDING', ...secretRef(SECRET_KEYS.binding) },
                { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
              ],
              ports: [{ name: 'metrics', containerPort: DATA_PLANE_HEALTH_PORT, protocol: 'TCP' }],
              livenessProbe: { httpGet: { path: '/healthz', port: 'metrics' }, periodSeconds: 10, timeoutSeconds: 3, failureThreshold: 3 },
              readinessProbe: { httpGet: { path: '/readyz', port: 'metrics' }, periodSeconds: 2, timeoutSeconds: 3, failureThreshold: 2 },
              securityContext: { ...restricted, allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
              ...(dedicated.resources !== undefined ? { resources: { ...dedicated.resources } } : {}),
              volumeMounts: [
                ...(settings.ca !== undefined ? [{ name: 'edge-ca', mountPath: '/etc/tuna/data-plane', readOnly: true }] : []),
                { name: 'tmp', mountPath: '/tmp' },
              ],
            },
          ],
          volumes: [
            ...(settings.ca !== undefined ? [{ name: 'edge-ca', secret: { secretName: dataPlaneSecretName(gw.name), items: [{ key: SECRET_KEYS.ca, path: SECRET_KEYS.ca }] } }] : []),
            { name: 'tmp', emptyDir: { sizeLimit: '16Mi' } },
          ],
          ...(dedicated.nodeSelector !== undefined ? { nodeSelector: { ...dedicated.nodeSelector } } : {}),
          ...(dedicated.tolerations !== undefined ? { tolerations: dedicated.tolerations.map((t) => ({ ...t })) } : {}),
        },
      },
    },
  };
}
