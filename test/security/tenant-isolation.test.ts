import { expect } from 'chai';
import { Agent } from 'node:http';
import { openSqliteStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';
import type { TunnelSession } from '../../src/tunnel/session.js';
import { attack } from '../support/attack-log.js';
import { BASE_DOMAIN, connectAgent, reserveAndMint, seedAccount, startStoreEdge } from '../support/edge-store-harness.js';
import type { StoreEdge } from '../support/edge-store-harness.js';
import { fetchStatus } from '../support/public-load.js';

// Tenant A floods its own binding with 64 connections while tenant B's one client is measured
// (docs/security.md "Attack suite"). Latencies are printed, never asserted: the assertion is that
// every request of B is answered.

const B_REQUESTS = 500;
const A_CONNECTIONS = 64;

/** percentile of sorted milliseconds */
const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? 0;

/** timed sends GETs one after another on `agent`, recording each status and its milliseconds. */
async function timed(port: number, host: string, agent: Agent, count: number): Promise<{ statuses: number[]; ms: number[] }> {
  const statuses: number[] = [];
  const ms: number[] = [];
  for (let i = 0; i < count; i++) {
    const start = process.hrtime.bigint();
    statuses.push(await fetchStatus(port, `/b${i}`, agent, host).catch(() => 0));
    ms.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return { statuses, ms };
}

describe('attack: a tenant floods its own binding while another tenant is served', function () {
  this.timeout(90_000);
  let store: Store;
  let running: StoreEdge;
  const sessions: TunnelSession[] = [];

  before(async () => {
    store = await openSqliteStore(':memory:');
    running = await startStoreEdge(store);
    for (const name of ['a', 'b']) {
      const tenant = await seedAccount(store, `tenant-${name}`);
      const t = await reserveAndMint(running.controlPort, tenant.reservationsToken, { kind: 'domain', hostname: `${name}.${BASE_DOMAIN}` }, { protocol: 'http' });
      sessions.push(await connectAgent(running.endpoint, t.bindingId, t.token));
    }
  });

  after(async () => {
    for (const s of sessions.splice(0)) s.destroy();
    await running.edge.close();
    await store.close();
  });

  it(`answers all ${B_REQUESTS} requests of tenant B while tenant A floods with ${A_CONNECTIONS} connections; prints both p99`, async () => {
    const aHost = `a.${BASE_DOMAIN}`;
    const bHost = `b.${BASE_DOMAIN}`;
    const quiet = new Agent({ keepAlive: true, maxSockets: 1 });
    const baseline = await timed(running.httpPort, bHost, quiet, 100);

    const flood = new Agent({ keepAlive: true, maxSockets: A_CONNECTIONS });
    const aStatuses: number[] = [];
    const aMs: number[] = [];
    let isDone = false;
    const worker = async (): Promise<void> => {
      for (let i = 0; i < 100_000 && !isDone; i++) {
        const start = process.hrtime.bigint();
        aStatuses.push(await fetchStatus(running.httpPort, '/bytes?n=4096', flood, aHost).catch(() => 0));
        aMs.push(Number(process.hrtime.bigint() - start) / 1e6);
      }
    };
    const flooding = Promise.all(Array.from({ length: A_CONNECTIONS }, worker));
    const b = await timed(running.httpPort, bHost, quiet, B_REQUESTS);
    isDone = true;
    await flooding;
    flood.destroy();
    quiet.destroy();

    const sortedB = [...b.ms].sort((x, y) => x - y);
    const sortedA = [...aMs].sort((x, y) => x - y);
    const sortedBase = [...baseline.ms].sort((x, y) => x - y);
    const aCodes = [...new Set(aStatuses)].sort().join('/');
    attack(
      `tenant flood: A sent ${aStatuses.length.toLocaleString('en')} requests on ${A_CONNECTIONS} connections (statuses ${aCodes}, p50 ${percentile(sortedA, 50).toFixed(1)} ms, p99 ${percentile(sortedA, 99).toFixed(1)} ms); ` +
        `B ${b.statuses.filter((s) => s === 200).length}/${B_REQUESTS} answered 200, p50 ${percentile(sortedB, 50).toFixed(1)} ms, p99 ${percentile(sortedB, 99).toFixed(1)} ms (alone: p99 ${percentile(sortedBase, 99).toFixed(1)} ms)`,
    );
    expect(b.statuses.filter((s) => s !== 200)).to.deep.equal([]);
    expect(aStatuses.filter((s) => s !== 200 && s !== 429)).to.deep.equal([]);
    expect(aStatuses.length).to.be.greaterThan(B_REQUESTS);
  });
});
