/**
 * The scale benchmark's side of the local test cluster (hack/cluster/up.sh): bring it up, one
 * namespace with an echo-basic Deployment and its Service, and Ingresses of class tuna, one host
 * each, all to that Service. Run it under the cluster lock, as the cluster tests are
 * (`flock -o <lock> npm run bench -- scale`): one test cluster at a time on a machine.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { AppsV1Api, CoreV1Api, DiscoveryV1Api, KubeConfig, NetworkingV1Api } from '@kubernetes/client-node';
import { echoDeployment, waitFor } from '../../test/cluster/cluster-env.js';
import { repoRoot } from '../tunnel/tools.js';
import { SCALE_BASE_DOMAIN } from './stack.js';

const run = promisify(execFile);

/** ScaleCluster is the running cluster and whether this run started it (then it stops it too). */
export interface ScaleCluster {
  kubeconfig: string;
  config: KubeConfig;
  started: boolean;
}

/** clusterUp runs hack/cluster/up.sh (idempotent) and loads its admin kubeconfig. */
export async function clusterUp(): Promise<ScaleCluster> {
  const { stdout } = await run(join(repoRoot, 'hack/cluster/up.sh'), { cwd: repoRoot, timeout: 60 * 60_000, maxBuffer: 16 << 20 });
  const kubeconfig = /KUBECONFIG=(\S+)/.exec(stdout)?.[1];
  if (kubeconfig === undefined) throw new Error(`hack/cluster/up.sh printed no KUBECONFIG: ${stdout}`);
  const config = new KubeConfig();
  config.loadFromFile(kubeconfig);
  return { kubeconfig, config, started: /TUNA_CLUSTER_STARTED=1/.test(stdout) };
}

/** clusterDown stops the cluster if this run started it. */
export async function clusterDown(cluster: ScaleCluster): Promise<void> {
  if (cluster.started) await run(join(repoRoot, 'hack/cluster/down.sh'), { cwd: repoRoot, timeout: 300_000 });
}

/** prepareNamespace makes `namespace` with one echo pod behind Service `echo` and waits for its ready endpoint. */
export async function prepareNamespace(config: KubeConfig, namespace: string): Promise<void> {
  const core = config.makeApiClient(CoreV1Api);
  await core.deleteNamespace({ name: namespace }).catch(() => undefined);
  await waitFor(`namespace ${namespace} left by an earlier run to go`, 300_000, async () =>
    (await core.readNamespace({ name: namespace }).then(() => false).catch(() => true)) ? true : undefined, 1000);
  await core.createNamespace({ body: { metadata: { name: namespace } } });
  await waitFor('default ServiceAccount', 60_000, () => core.readNamespacedServiceAccount({ name: 'default', namespace }));
  const labels = { app: 'echo' };
  await config.makeApiClient(AppsV1Api).createNamespacedDeployment({ namespace, body: echoDeployment('echo', labels, 1) });
  await core.createNamespacedService({ namespace, body: { metadata: { name: 'echo' }, spec: { selector: labels, ports: [{ name: 'http', port: 8080, targetPort: 'http' }] } } });
  const discovery = config.makeApiClient(DiscoveryV1Api);
  await waitFor('the echo pod ready', 120_000, async () => {
    const slices = await discovery.listNamespacedEndpointSlice({ namespace, labelSelector: 'kubernetes.io/service-name=echo' });
    return slices.items.flatMap((s) => s.endpoints ?? []).some((e) => e.conditions?.ready === true) ? true : undefined;
  });
}

/** deleteNamespace removes the benchmark's namespace (its Ingresses and the keys Secret with it). */
export async function deleteNamespace(config: KubeConfig, namespace: string): Promise<void> {
  await config.makeApiClient(CoreV1Api).deleteNamespace({ name: namespace }).catch(() => undefined);
}

/** hostOf is the public hostname of benchmark Ingress `i`. */
export function hostOf(i: number): string {
  return `h${i}.${SCALE_BASE_DOMAIN}`;
}

/** createIngresses creates Ingresses `from`..`to - 1` (one host each, Service `echo`), at most `concurrency` calls at once. */
export async function createIngresses(config: KubeConfig, namespace: string, from: number, to: number, concurrency = 16): Promise<void> {
  const networking = config.makeApiClient(NetworkingV1Api);
  let next = from;
  const worker = async () => {
    while (next < to) {
      const i = next++;
      await networking.createNamespacedIngress({
        namespace,
        body: {
          metadata: { name: `h${i}` },
          spec: {
            ingressClassName: 'tuna',
            rules: [{ host: hostOf(i), http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'echo', port: { name: 'http' } } } }] } }],
          },
        },
      });
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, to - from) }, worker));
}
