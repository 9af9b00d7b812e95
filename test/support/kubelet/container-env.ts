// container-env.ts — a container's environment: env, envFrom, the downward API, $(VAR) expansion.
import type { V1Container, V1ObjectFieldSelector, V1Pod } from '@kubernetes/client-node';

/** ObjectReader reads the ConfigMaps and Secrets a pod refers to (data already base64-decoded). */
export interface ObjectReader {
  readConfigMap(namespace: string, name: string): Promise<Record<string, string> | undefined>;
  readSecret(namespace: string, name: string): Promise<Record<string, string> | undefined>;
}

/** MissingReferenceError is a required ConfigMap/Secret (key) that does not exist. */
export class MissingReferenceError extends Error {
  readonly code = 'TUNA_KUBELET_MISSING_REFERENCE';
}

/** resolveFieldRef answers a downward API field path (the fields the API allows in env). */
export function resolveFieldRef(pod: V1Pod, podIp: string, selector: V1ObjectFieldSelector): string {
  const meta = pod.metadata ?? {};
  const indexed = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(selector.fieldPath);
  if (indexed) {
    const map = indexed[1] === 'labels' ? meta.labels : meta.annotations;
    return map?.[indexed[2] ?? ''] ?? '';
  }
  switch (selector.fieldPath) {
    case 'metadata.name':
      return meta.name ?? '';
    case 'metadata.namespace':
      return meta.namespace ?? '';
    case 'metadata.uid':
      return meta.uid ?? '';
    case 'spec.nodeName':
      return pod.spec?.nodeName ?? '';
    case 'spec.serviceAccountName':
      return pod.spec?.serviceAccountName ?? '';
    case 'status.podIP':
    case 'status.podIPs':
      return podIp;
    case 'status.hostIP':
    case 'status.hostIPs':
      return '127.0.0.1';
    default:
      return '';
  }
}

/** expandVariables applies Kubernetes' $(VAR) expansion; $$ escapes and unknown names stay as written. */
export function expandVariables(text: string, env: ReadonlyMap<string, string>): string {
  return text.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)/g, (match, name: string | undefined) => {
    if (match === '$$') return '$';
    return name !== undefined && env.has(name) ? (env.get(name) ?? '') : match;
  });
}

/** buildContainerEnv returns the container's variables in declaration order (later wins). */
export async function buildContainerEnv(
  pod: V1Pod,
  container: V1Container,
  podIp: string,
  reader: ObjectReader,
): Promise<Map<string, string>> {
  const namespace = pod.metadata?.namespace ?? 'default';
  const env = new Map<string, string>([['HOSTNAME', pod.spec?.hostname ?? pod.metadata?.name ?? '']]);
  for (const source of container.envFrom ?? []) {
    const ref = source.configMapRef ?? source.secretRef;
    if (!ref?.name) continue;
    const data = source.configMapRef
      ? await reader.readConfigMap(namespace, ref.name)
      : await reader.readSecret(namespace, ref.name);
    if (!data && !ref.optional) throw new MissingReferenceError(`envFrom ${ref.name} not found`);
    for (const [key, value] of Object.entries(data ?? {})) env.set(`${source.prefix ?? ''}${key}`, value);
  }
  for (const variable of container.env ?? []) {
    env.set(variable.name, await resolveEnvValue(pod, podIp, variable, env, reader));
  }
  return env;
}

async function resolveEnvValue(
  pod: V1Pod,
  podIp: string,
  variable: NonNullable<V1Container['env']>[number],
  env: ReadonlyMap<string, string>,
  reader: ObjectReader,
): Promise<string> {
  const namespace = pod.metadata?.namespace ?? 'default';
  const from = variable.valueFrom;
  if (!from) return expandVariables(variable.value ?? '', env);
  if (from.fieldRef) return resolveFieldRef(pod, podIp, from.fieldRef);
  const keyRef = from.configMapKeyRef ?? from.secretKeyRef;
  if (keyRef) {
    const data = from.configMapKeyRef
      ? await reader.readConfigMap(namespace, keyRef.name ?? '')
      : await reader.readSecret(namespace, keyRef.name ?? '');
    const value = data?.[keyRef.key];
    if (value === undefined && !keyRef.optional) {
      throw new MissingReferenceError(`${variable.name}: key ${keyRef.key} of ${keyRef.name} not found`);
    }
    return value ?? '';
  }
  // resourceFieldRef: we enforce no limits; report the declared value or nothing.
  return '';
}

/** ServiceAddress is a Service's ClusterIP and port. */
export interface ServiceAddress {
  readonly host: string;
  readonly port: number;
}

/**
 * kubernetesServiceEnv is what the kubelet gives every container for the `kubernetes` Service of
 * `default` (the in-cluster config of client libraries reads KUBERNETES_SERVICE_HOST/PORT).
 */
export function kubernetesServiceEnv(service: ServiceAddress): [string, string][] {
  const { host, port } = service;
  const prefix = `KUBERNETES_PORT_${port}_TCP`;
  return [
    ['KUBERNETES_SERVICE_HOST', host],
    ['KUBERNETES_SERVICE_PORT', String(port)],
    ['KUBERNETES_SERVICE_PORT_HTTPS', String(port)],
    ['KUBERNETES_PORT', `tcp://${host}:${port}`],
    [prefix, `tcp://${host}:${port}`],
    [`${prefix}_PROTO`, 'tcp'],
    [`${prefix}_PORT`, String(port)],
    [`${prefix}_ADDR`, host],
  ];
}
