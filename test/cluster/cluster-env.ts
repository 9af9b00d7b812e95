// cluster-env.ts — how cluster tests reach the test cluster and run its scripts.
import { execFile } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { AppsV1Api, CoreV1Api, DiscoveryV1Api, KubeConfig, NetworkingV1Api, loadYaml } from '@kubernetes/client-node';
import type { ApiextensionsV1Api, V1CustomResourceDefinition, V1Deployment } from '@kubernetes/client-node';

/** REPO_ROOT is the repository's top directory (scripts are run from there). */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** runScript runs a repository script, streaming its progress (stderr) and resolving with stdout. */
export function runScript(script: string, timeoutMs: number, args: readonly string[] = []): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(path.join(REPO_ROOT, script), args, { cwd: REPO_ROOT, timeout: timeoutMs, maxBuffer: 16 << 20 }, (error, stdout) =>
      error ? reject(error) : resolve(stdout),
    );
    child.stderr?.pipe(process.stderr);
  });
}

/** clusterConfig loads the admin kubeconfig the root hook exported in KUBECONFIG. */
export function clusterConfig(): KubeConfig {
  const file = process.env.KUBECONFIG;
  if (!file) throw new Error('KUBECONFIG is not set: run cluster tests with npm run test:cluster');
  const config = new KubeConfig();
  config.loadFromFile(file);
  return config;
}

/** waitFor polls `check` until it returns a value, every intervalMs, failing after timeoutMs. */
export async function waitFor<T>(what: string, timeoutMs: number, check: () => Promise<T | undefined>, intervalMs = 250): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** ECHO_IMAGE is the Gateway API echo server (echo-basic), built from its Go module by the cluster build. */
export const ECHO_IMAGE = 'gcr.io/k8s-staging-gateway-api/echo-basic:v20240412-v1.0.0-394-g40c666fd';

/**
 * echoDeployment is a Deployment of `replicas` echo-basic pods labelled `labels`, serving on the
 * container port named `http` (3000) and told their pod name and namespace, which they echo back.
 * With `udp`, they run echo-basic's UDP echo instead (UDP_ECHO_SERVER, on the container port named
 * `udp`, UDP 8080), answering each datagram with JSON naming the request and SERVICE_NAME (`name`),
 * as the conformance suite's UDPRoute backends do.
 */
export function echoDeployment(name: string, labels: Record<string, string>, replicas: number, options: { udp?: boolean } = {}): V1Deployment {
  const ports = options.udp === true ? [{ name: 'udp', containerPort: 8080, protocol: 'UDP' }] : [{ name: 'http', containerPort: 3000 }];
  const udpEnv = options.udp === true ? [{ name: 'UDP_ECHO_SERVER', value: '1' }, { name: 'SERVICE_NAME', value: name }] : [];
  return {
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          containers: [
            {
              name: 'echo',
              image: ECHO_IMAGE,
              ports,
              env: [
                ...udpEnv,
                { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
                { name: 'NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
              ],
            },
          ],
        },
      },
    },
  };
}

/**
 * deployEchoBehindIngress makes `namespace` with an echo-basic Deployment of `replicas` pods, its
 * Service `echo` (port `http` 8080 → the pods' 3000) and an Ingress `echo` of class tuna sending
 * `host` to it, and waits until the Service has `replicas` ready endpoints.
 */
export async function deployEchoBehindIngress(config: KubeConfig, namespace: string, host: string, replicas: number): Promise<void> {
  const core = config.makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: namespace } } });
  await waitFor('default ServiceAccount', 30_000, () => core.readNamespacedServiceAccount({ name: 'default', namespace }));
  const labels = { app: 'echo' };
  await config.makeApiClient(AppsV1Api).createNamespacedDeployment({ namespace, body: echoDeployment('echo', labels, replicas) });
  await core.createNamespacedService({ namespace, body: { metadata: { name: 'echo' }, spec: { selector: labels, ports: [{ name: 'http', port: 8080, targetPort: 'http' }] } } });
  await config.makeApiClient(NetworkingV1Api).createNamespacedIngress({
    namespace,
    body: {
      metadata: { name: 'echo' },
      spec: { ingressClassName: 'tuna', rules: [{ host, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'echo', port: { name: 'http' } } } }] } }] },
    },
  });
  const discovery = config.makeApiClient(DiscoveryV1Api);
  await waitFor(`${replicas} ready endpoint(s)`, 90_000, async () => {
    const slices = await discovery.listNamespacedEndpointSlice({ namespace, labelSelector: 'kubernetes.io/service-name=echo' });
    return slices.items.flatMap((s) => s.endpoints ?? []).filter((e) => e.conditions?.ready === true).length === replicas ? true : undefined;
  });
}

/** installTunaCrds creates the tuna.dev CRDs of config/crd that are missing and waits until each is Established. */
export async function installTunaCrds(crds: ApiextensionsV1Api): Promise<void> {
  const dir = path.join(REPO_ROOT, 'config/crd');
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.yaml'))) {
    // loadYaml maps `x-kubernetes-*` keys to the client's field names, which a plain YAML parse would lose
    const crd = loadYaml<V1CustomResourceDefinition>(readFileSync(path.join(dir, file), 'utf8'));
    const name = crd.metadata?.name ?? '';
    const exists = await crds.readCustomResourceDefinition({ name }).then(() => true, () => false);
    if (!exists) await crds.createCustomResourceDefinition({ body: crd });
    await waitFor(`CRD ${name} Established`, 30_000, async () =>
      (await crds.readCustomResourceDefinition({ name })).status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ? true : undefined,
    );
  }
}
