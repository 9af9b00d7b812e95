// operator-restart.test.ts — a Secret-mode `tuna operator` (keys in a Secret, Lease
// election) restarted several times while requests keep arriving keeps its reservation and its
// tunnel key, and no request fails outside the reconnects.
import { expect } from 'chai';
import { performance } from 'node:perf_hooks';
import { CoreV1Api } from '@kubernetes/client-node';
import { ControlClient } from '../../src/control-api/index.js';
import { openSqliteStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';
import { BASE_DOMAIN, seedAccount, startStoreEdge } from '../support/edge-store-harness.js';
import type { StoreEdge } from '../support/edge-store-harness.js';
import { http1 } from '../support/tunnel-harness.js';
import { clusterConfig, deployEchoBehindIngress, waitFor } from './cluster-env.js';
import { startOperatorProcess, waitUntilWatching } from './operator-process.js';
import type { OperatorProcess } from './operator-process.js';

/** Sample is one request of the loop: when it was in flight and what the edge answered (0: no answer). */
interface Sample {
  start: number;
  end: number;
  status: number;
  body: string;
}

/** Window is one reconnect: from SIGTERM to the old process until the new one's tunnel is at the edge. */
interface Window {
  from: number;
  to: number;
}

const RESTARTS = 3;
/** the loop's bound: it stops here even if the test never tells it to */
const MAX_REQUESTS = 4000;
const PAUSE_MS = 50;

describe('tuna operator restarted under a request loop (keys in a Secret, Lease election)', function () {
  this.timeout(300_000);
  const namespace = `tuna-restart-${process.pid}`;
  const host = `restart-${process.pid}.${BASE_DOMAIN}`;
  const bindingId = `binding/host/${host}`;
  const clusterId = `restart-${process.pid}`;
  let store: Store;
  let edge: StoreEdge;
  let client: ControlClient;
  let core: CoreV1Api;
  let apiKey = '';
  let operator: OperatorProcess | undefined;

  before(async () => {
    const config = clusterConfig();
    core = config.makeApiClient(CoreV1Api);
    await deployEchoBehindIngress(config, namespace, host, 1);
    store = await openSqliteStore(':memory:');
    edge = await startStoreEdge(store);
    apiKey = (await seedAccount(store)).reservationsToken;
    client = new ControlClient({ url: new URL(`http://127.0.0.1:${edge.controlPort}`) }, apiKey);
  });

  after(async () => {
    operator?.child.kill('SIGKILL');
    await edge?.edge.close();
    await store?.close();
    await core?.deleteNamespace({ name: namespace }).catch(() => undefined);
  });

  const start = (): OperatorProcess =>
    startOperatorProcess(edge.controlPort, apiKey, ['--cluster-id', clusterId, '--keys-namespace', namespace], { POD_NAME: `operator-${process.pid}` });
  const connections = (): number => edge.edge.registry.count().get(bindingId) ?? 0;
  /** held is the reservation of our host and the live keys on it, as the edge lists them */
  const held = async (): Promise<{ reservationId: string | undefined; keyIds: string[] }> => {
    const labels = { 'tuna.dev/cluster': clusterId };
    const reservation = (await client.listReservations(labels)).reservations.find((r) => r.kind === 'domain' && r.value === host);
    const keys = (await client.listTunnelKeys(labels)).tunnelKeys.filter((k) => k.revokedAt === null && k.reservationId === reservation?.id);
    return { reservationId: reservation?.id, keyIds: keys.map((k) => k.id).sort() };
  };

  it('keeps the same reservation and key over every restart, and fails requests only during a reconnect', async () => {
    operator = start();
    await waitUntilWatching(operator);
    await waitFor('a tunnel connection at the edge', 30_000, async () => (connections() >= 1 ? true : undefined));
    const first = await held();
    expect(first.reservationId, 'the hostname is reserved').to.be.a('string');
    expect(first.keyIds, 'one live key').to.have.length(1);

    const samples: Sample[] = [];
    let isStopping = false;
    const loop = (async () => {
      for (let i = 0; i < MAX_REQUESTS && !isStopping; i++) {
        const sample: Sample = { start: performance.now(), end: 0, status: 0, body: '' };
        try {
          const res = await http1(edge.httpPort, host, `/loop/${i}`);
          sample.status = res.status;
          sample.body = res.status === 200 ? '' : res.body.toString().trim();
        } catch (err) {
          sample.body = (err as Error).message;
        }
        sample.end = performance.now();
        samples.push(sample);
        await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
      }
    })();
    const answeredAfter = (count: number, since: number) =>
      waitFor(`${count} answers`, 30_000, async () => (samples.filter((s) => s.start >= since).length >= count ? true : undefined));

    const windows: Window[] = [];
    /** what each stopped process printed from SIGTERM on */
    const shutdowns: string[][] = [];
    const afterRestart: { reservationId: string | undefined; keyIds: string[] }[] = [];
    try {
      await answeredAfter(20, 0);
      for (let restart = 0; restart < RESTARTS; restart++) {
        const old = operator;
        const from = performance.now();
        old.child.kill('SIGTERM');
        expect(await old.exited, `restart ${restart}: the old operator exits 0`).to.equal(0);
        shutdowns.push(old.output().slice(old.output().indexOf('SIGTERM: closing tunnels')).split('\n').filter((l) => l !== ''));
        operator = start();
        await waitUntilWatching(operator);
        await waitFor(`restart ${restart}: the new operator's tunnel at the edge`, 60_000, async () => (connections() >= 1 ? true : undefined), 50);
        const to = performance.now();
        windows.push({ from, to });
        afterRestart.push(await held());
        // the window is closed: let a few requests through before the next restart
        await answeredAfter(20, to);
      }
    } finally {
      isStopping = true;
      await loop;
    }

    const inWindow = (s: Sample): boolean => windows.some((w) => s.start < w.to && s.end > w.from);
    const failed = samples.filter((s) => s.status !== 200);
    const outside = failed.filter((s) => !inWindow(s));
    const during = failed.filter(inWindow);
    const answers = (list: Sample[]): string[] => [...new Set(list.map((s) => `${s.status} ${s.body}`))];
    console.log(
      `      ${samples.length} requests, ${RESTARTS} restarts; failed during each reconnect: ${windows.map((w) => failed.filter((s) => s.start < w.to && s.end > w.from).length).join(', ')} (${answers(during).join(' | ') || 'none'}); outside: ${outside.length}`,
    );
    for (const [i, got] of afterRestart.entries()) expect(got, `after restart ${i}: the same reservation and key`).to.deep.equal(first);
    expect(answers(outside), 'no request fails outside a reconnect').to.deep.equal([]);
    // During a reconnect the hostname stays reserved: the edge may say only that no tunnel is
    // connected (after waiting tunnelWaitMs for one), or that the stopping operator's tunnel went
    // away under a request it had sent there; never `404 unknown host`, a released hostname.
    const reconnecting = ['503 no tunnel is connected for this host', '502 the tunnel failed before the service answered'];
    expect(answers(during).filter((a) => !reconnecting.includes(a)), 'other failures during the reconnects').to.deep.equal([]);
    // a quiet shutdown: the stop aborts the watches, which is no error, and stepping down is no news
    for (const [i, lines] of shutdowns.entries()) expect(lines, `restart ${i}: printed from SIGTERM on`).to.deep.equal(['SIGTERM: closing tunnels (in-flight requests finish first)']);
  });
});
