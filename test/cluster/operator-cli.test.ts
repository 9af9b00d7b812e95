// operator-cli.test.ts — `tuna operator` as users run it: a process with KUBECONFIG and an account
// API key of scope reservations, publishing an Ingress of the test cluster through a store-mode
// edge, writing its status, never logging the key, and draining on SIGTERM.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { CoreV1Api, NetworkingV1Api } from '@kubernetes/client-node';
import { openSqliteStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';
import { BASE_DOMAIN, seedAccount, startStoreEdge } from '../support/edge-store-harness.js';
import type { StoreEdge } from '../support/edge-store-harness.js';
import { http1 } from '../support/tunnel-harness.js';
import { REPO_ROOT, clusterConfig, deployEchoBehindIngress, waitFor } from './cluster-env.js';

describe('tuna operator (the command) on the test cluster', function () {
  this.timeout(180_000);
  const namespace = `tuna-cli-${process.pid}`;
  const host = `cli-${process.pid}.${BASE_DOMAIN}`;
  const bindingId = `binding/host/${host}`;
  let store: Store;
  let edge: StoreEdge;
  let core: CoreV1Api;
  let networking: NetworkingV1Api;
  let child: ChildProcess | undefined;
  let output = '';
  let apiKey = '';

  before(async () => {
    const config = clusterConfig();
    core = config.makeApiClient(CoreV1Api);
    networking = config.makeApiClient(NetworkingV1Api);
    await deployEchoBehindIngress(config, namespace, host, 1);
    store = await openSqliteStore(':memory:');
    edge = await startStoreEdge(store);
    apiKey = (await seedAccount(store)).reservationsToken;
  });

  after(async () => {
    child?.kill('SIGKILL');
    await edge?.edge.close();
    await store?.close();
    await core?.deleteNamespace({ name: namespace }).catch(() => undefined);
  });

  it('publishes the Ingress through the edge, writes its status, and exits 0 on SIGTERM after draining', async () => {
    const args = ['--import', 'tsx', path.join(REPO_ROOT, 'src/cli/main.ts'), 'operator', '--edge', `tcp://127.0.0.1:${edge.controlPort}`, '--cluster-id', `cli-${process.pid}`];
    child = spawn(process.execPath, args, { cwd: REPO_ROOT, env: { ...process.env, TUNA_KEY: apiKey }, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout?.on('data', (b: Buffer) => (output += b.toString()));
    child.stderr?.on('data', (b: Buffer) => (output += b.toString()));
    const exited = new Promise<number | null>((resolve) => child?.once('exit', (code) => resolve(code)));

    await waitFor('the operator to watch the cluster', 60_000, async () => (output.includes('tuna operator: watching the cluster') ? true : undefined));
    await waitFor('a tunnel connection at the edge', 30_000, async () => ((edge.edge.registry.count().get(bindingId) ?? 0) >= 1 ? true : undefined));
    const res = await http1(edge.httpPort, host, '/via-the-command');
    expect(res.status).to.equal(200);
    expect(JSON.parse(res.body.toString()) as { namespace: string; path: string }).to.include({ namespace, path: '/via-the-command' });
    await waitFor('the Ingress status', 30_000, async () => {
      const got = await networking.readNamespacedIngressStatus({ name: 'echo', namespace });
      return got.status?.loadBalancer?.ingress?.[0]?.hostname === host ? true : undefined;
    });

    child.kill('SIGTERM');
    expect(await exited).to.equal(0);
    await waitFor('no tunnel connection at the edge', 10_000, async () => ((edge.edge.registry.count().get(bindingId) ?? 0) === 0 ? true : undefined));
    expect(output).to.match(/synced: \d+ binding\(s\)/);
    expect(output, 'the API key never appears in the output').to.not.include(apiKey.slice(-43));
    // A quiet shutdown: the stop aborts the watches, which is no error.
    const afterSignal = output.slice(output.indexOf('SIGTERM: closing tunnels')).split('\n').filter((l) => l !== '');
    expect(afterSignal, 'what the operator prints from SIGTERM on').to.deep.equal(['SIGTERM: closing tunnels (in-flight requests finish first)']);
    expect(output, 'no raw HTTP dump').to.not.match(/HTTP-Code|Headers: \{/);
  });
});
