// echo-basic.test.ts — the cluster really runs pods: a Deployment of the Gateway API echo server,
// its Service's EndpointSlice, traffic to each pod IP, logs through the apiserver, and cleanup.
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import http from 'node:http';
import { promisify } from 'node:util';
import { AppsV1Api, CoreV1Api, DiscoveryV1Api, type V1Pod } from '@kubernetes/client-node';
import { podNetworkNames } from '../support/kubelet/pod-network.js';
import { clusterConfig, echoDeployment, waitFor } from './cluster-env.js';

const run = promisify(execFile);

/** getJson fetches http://ip:port/path; pod IPs are inside 198.18.0.0/15, in namespaces we made. */
function getJson(ip: string, port: number, path: string): Promise<Record<string, unknown>> {
  expect(ip).to.match(/^198\.1[89]\./);
  return new Promise((resolve, reject) => {
    const request = http.get({ host: ip, port, path, timeout: 5000, agent: false }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => {
        try {
          resolve(JSON.parse(body) as Record<string, unknown>);
        } catch (error) {
          reject(error as Error);
        }
      });
    });
    request.on('timeout', () => request.destroy(new Error('timeout')));
    request.on('error', reject);
  });
}

/** netnsPids lists the processes inside a network namespace ('' when it is gone). */
async function netnsPids(netns: string): Promise<string[]> {
  const out = await run('ip', ['netns', 'pids', netns]).then((r) => r.stdout, () => '');
  return out.split('\n').filter(Boolean);
}

describe('test cluster: echo-basic Deployment', function () {
  this.timeout(180_000);
  const namespace = `echo-${process.pid}`;
  // Clients are made in before(): KUBECONFIG comes from the root hook, which runs after loading.
  let core: CoreV1Api;
  let apps: AppsV1Api;
  let discovery: DiscoveryV1Api;

  before(async () => {
    const config = clusterConfig();
    core = config.makeApiClient(CoreV1Api);
    apps = config.makeApiClient(AppsV1Api);
    discovery = config.makeApiClient(DiscoveryV1Api);
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    await waitFor('default ServiceAccount', 30_000, () => core.readNamespacedServiceAccount({ name: 'default', namespace }));
  });

  after(async () => {
    await core.deleteNamespace({ name: namespace }).catch(() => undefined);
  });

  it('runs 2 replicas that answer on their pod IPs, log through the apiserver, and vanish on delete', async () => {
    const labels = { app: 'echo' };
    await apps.createNamespacedDeployment({
      namespace,
      body: echoDeployment('echo', labels, 2),
    });
    await core.createNamespacedService({
      namespace,
      body: { metadata: { name: 'echo' }, spec: { selector: labels, ports: [{ name: 'http', port: 8080, targetPort: 'http' }] } },
    });

    const endpoints = await waitFor('an EndpointSlice with 2 ready endpoints', 90_000, async () => {
      const slices = await discovery.listNamespacedEndpointSlice({ namespace, labelSelector: 'kubernetes.io/service-name=echo' });
      const ready = slices.items.flatMap((s) => s.endpoints ?? []).filter((e) => e.conditions?.ready === true);
      return ready.length === 2 ? ready : undefined;
    });

    const pods = (await core.listNamespacedPod({ namespace, labelSelector: 'app=echo' })).items;
    expect(pods.map((p) => p.status?.phase)).to.deep.equal(['Running', 'Running']);
    const podByName = new Map(pods.map((p): [string, V1Pod] => [p.metadata?.name ?? '', p]));
    for (const endpoint of endpoints) {
      const podName = endpoint.targetRef?.name ?? '';
      const ip = endpoint.addresses[0] ?? '';
      expect(podByName.get(podName)?.status?.podIP).to.equal(ip);
      const echo = await getJson(ip, 3000, `/from-test/${podName}`);
      expect(echo).to.include({ pod: podName, namespace, path: `/from-test/${podName}` });
    }

    const first = pods[0]?.metadata?.name ?? '';
    const log = await core.readNamespacedPodLog({ name: first, namespace, container: 'echo' });
    expect(log).to.include(`Echoing back request made to /from-test/${first}`);

    const sandboxes = pods.map((p) => podNetworkNames(p.metadata?.uid ?? '').netns);
    for (const netns of sandboxes) expect(await netnsPids(netns), `processes in ${netns}`).to.not.be.empty;
    const pids = (await Promise.all(sandboxes.map(netnsPids))).flat();

    await apps.deleteNamespacedDeployment({ name: 'echo', namespace, propagationPolicy: 'Foreground' });
    await waitFor('the pods to be deleted', 60_000, async () =>
      (await core.listNamespacedPod({ namespace })).items.length === 0 ? true : undefined,
    );
    const { stdout } = await run('ip', ['netns', 'list']);
    for (const netns of sandboxes) expect(stdout).to.not.include(netns);
    for (const pid of pids) expect(isAlive(Number(pid)), `pid ${pid}`).to.equal(false);
  });
});

/** isAlive says whether a process exists (signal 0 probes without signalling). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
