// operator-health.test.ts — `tuna operator --health-addr` against the test cluster and an edge on
// loopback: /healthz answers, /readyz turns 200 once the cache synced and the Ingress's tunnel is
// up, /metrics counts the binding and its connections (and, prom-client's families, the syncs timed
// and a request through the edge by binding and status), and /readyz turns 503 naming the binding
// once the edge is gone.
import { expect } from 'chai';
import { request } from 'node:http';
import { CoreV1Api } from '@kubernetes/client-node';
import { openSqliteStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';
import { BASE_DOMAIN, seedAccount, startStoreEdge } from '../support/edge-store-harness.js';
import { http1 } from '../support/tunnel-harness.js';
import type { StoreEdge } from '../support/edge-store-harness.js';
import { clusterConfig, deployEchoBehindIngress, waitFor } from './cluster-env.js';
import { startOperatorProcess, waitUntilWatching } from './operator-process.js';
import type { OperatorProcess } from './operator-process.js';

/** get sends one GET to the operator's health port on loopback. */
function get(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('tuna operator --health-addr on the test cluster', function () {
  this.timeout(300_000);
  const namespace = `tuna-health-${process.pid}`;
  const host = `health-${process.pid}.${BASE_DOMAIN}`;
  const bindingId = `binding/host/${host}`;
  let store: Store;
  let edge: StoreEdge | undefined;
  let core: CoreV1Api;
  let operator: OperatorProcess | undefined;
  let port = 0;

  before(async () => {
    const config = clusterConfig();
    core = config.makeApiClient(CoreV1Api);
    await deployEchoBehindIngress(config, namespace, host, 1);
    store = await openSqliteStore(':memory:');
    edge = await startStoreEdge(store);
    const apiKey = (await seedAccount(store)).reservationsToken;
    operator = startOperatorProcess(edge.controlPort, apiKey, ['--cluster-id', `health-${process.pid}`, '--keys-namespace', namespace, '--health-addr', '127.0.0.1:0'], {
      POD_NAME: `operator-${process.pid}`,
    });
    port = await waitFor('the health port in the log', 60_000, async () => {
      if (operator!.child.exitCode !== null) throw new Error(`the operator exited: ${operator!.output()}`);
      const m = /\/metrics on port (\d+)/.exec(operator!.output());
      return m ? Number(m[1]) : undefined;
    });
  });

  after(async () => {
    operator?.child.kill('SIGKILL');
    await edge?.edge.close();
    await store?.close();
    await core?.deleteNamespace({ name: namespace }).catch(() => undefined);
  });

  it('answers /healthz, turns ready once the tunnel is up, and counts it in /metrics', async () => {
    expect(await get(port, '/healthz')).to.deep.equal({ status: 200, body: 'ok\n' });
    await waitUntilWatching(operator!);
    await waitFor('/readyz 200', 60_000, async () => ((await get(port, '/readyz')).status === 200 ? true : undefined));
    expect(edge!.edge.registry.count().get(bindingId) ?? 0, 'the tunnel is at the edge').to.be.at.least(1);
    const metrics = (await get(port, '/metrics')).body.split('\n');
    expect(metrics).to.include.members(['tuna_operator_ready 1', 'tuna_operator_leader 1']);
    // the cluster may hold other tests' Ingresses too: ours is one of the bindings counted
    const value = (prefix: string) => Number(metrics.find((l) => l.startsWith(`${prefix} `))?.split(' ')[1]);
    expect(value('tuna_operator_bindings')).to.be.at.least(1);
    expect(value('tuna_operator_tunnel_bindings')).to.be.at.least(1);
    expect(value('tuna_operator_tunnel_connections{state="open"}')).to.be.at.least(1);
    // The syncs timed, the tunnel up, and a request through the edge counted by binding and status
    expect(value('tuna_operator_sync_duration_seconds_count{result="success"}')).to.be.at.least(1);
    expect(value('tuna_operator_tunnels{state="up"}')).to.be.at.least(1);
    expect((await http1(edge!.httpPort, host, '/')).status).to.equal(200);
    const counted = await waitFor('the request in /metrics', 10_000, async () => {
      const line = (await get(port, '/metrics')).body.split('\n').find((l) => l.startsWith(`tuna_operator_requests_total{binding="${bindingId}",code="200"} `));
      return line === undefined ? undefined : Number(line.split(' ')[1]);
    });
    expect(counted).to.be.at.least(1);
  });

  it('turns unready, naming the binding, once its tunnel connections are gone', async () => {
    await edge!.edge.close();
    edge = undefined;
    const answer = await waitFor('/readyz 503', 60_000, async () => {
      const got = await get(port, '/readyz');
      return got.status === 503 ? got : undefined;
    });
    expect(answer.body).to.match(/^- no tunnel connection open for .+$/m);
    expect(answer.body.split('\n').find((l) => l.startsWith('- no tunnel connection open for'))?.split(/, | for /)).to.include(bindingId);
    expect(await get(port, '/healthz')).to.deep.equal({ status: 200, body: 'ok\n' });
  });
});
