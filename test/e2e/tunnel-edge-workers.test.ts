import { expect } from 'chai';
import type { Socket } from 'node:net';
import { startEdge } from '../../src/edge/index.js';
import type { EdgeServer } from '../../src/edge/index.js';
import { SystemClock } from '../../src/tunnel/clock.js';
import { NetEdgeDialer } from '../../src/tunnel/dialer.js';
import type { EdgeDialer, EdgeEndpoint } from '../../src/tunnel/dialer.js';
import { StaticKeySource } from '../../src/tunnel/key-source.js';
import { TunnelManager } from '../../src/tunnel/manager.js';
import { WORKER_DIALS_PER_WORKER } from '../../src/tunnel/session.js';
import { parseEdgeWorker } from '../../src/wire/index.js';
import { TestStreamHandler } from '../support/tunnel-handlers.js';
import { http1, testEdgeConfig, waitUntil } from '../support/tunnel-harness.js';

/**
 * The agent's side of `tuna edge --workers N` (docs/protocol.md §9.8), in one process: two edges
 * stand for two workers of one node (each says `tuna-edge-worker: i/2` in its 101), and a dialer
 * hands the agent's connections to them as cluster's primary would — in turn, or always to the
 * same one. The agent must end up with one shared connection per worker for every binding.
 */
class WorkerDialer implements EdgeDialer {
  readonly #net = new NetEdgeDialer({ connectTimeoutMs: 2000 });
  dials = 0;
  constructor(readonly ports: () => number[]) {}
  dial(edge: EdgeEndpoint, signal: AbortSignal): Promise<Socket> {
    const ports = this.ports();
    const port = ports[this.dials++ % ports.length]!;
    return this.#net.dial({ ...edge, port }, signal);
  }
}

const hosts = ['a.test', 'b.test', 'c.test'];
const idOf = (h: string): string => `binding/host/${h}`;

describe('agent connections to an edge of several worker processes', function () {
  this.timeout(30_000);
  let workers: EdgeServer[] = [];
  let manager: TunnelManager | undefined;

  async function startWorkers(): Promise<Map<string, string>> {
    const keys = new Map<string, string>();
    const config = testEdgeConfig(hosts.map((h) => ({ id: idOf(h), kind: 'host' as const, hostnames: [h] })), { limits: { tunnelWaitMs: 0 } }, keys);
    workers = await Promise.all([0, 1].map((index) => startEdge(config, { worker: { index, count: 2 } })));
    return keys;
  }

  afterEach(async () => {
    manager?.destroy();
    manager = undefined;
    await Promise.all(workers.map((w) => w.close()));
    workers = [];
  });

  function managerWith(dialer: EdgeDialer, keys: Map<string, string>): TunnelManager {
    return new TunnelManager(dialer, new SystemClock(), new TestStreamHandler(), new StaticKeySource(keys), { sharedConnections: true, backoff: { baseMs: 100, maxMs: 400 } });
  }

  it('parses the worker header, and takes anything malformed or out of range as one process', () => {
    expect(parseEdgeWorker('1/2')).to.deep.equal({ index: 1, count: 2 });
    for (const bad of [undefined, '', '2/2', '0/0', '1/999', 'x/2', '1/2/3', '-1/2']) expect(parseEdgeWorker(bad), String(bad)).to.equal(undefined);
  });

  it('holds one shared connection per worker, each serving every binding, and both workers answer', async () => {
    const keys = await startWorkers();
    const dialer = new WorkerDialer(() => workers.map((w) => w.address().tunnel.port));
    manager = managerWith(dialer, keys);
    manager.apply(hosts.map((h) => ({ bindingId: idOf(h), edges: [{ host: '127.0.0.1', port: 1, tls: false }], keyRef: idOf(h) })));
    await waitUntil(() => workers.every((w) => w.registry.all().length === hosts.length), 10_000);
    for (const w of workers) {
      expect(w.registry.shared(), 'one shared connection per worker').to.have.length(1);
      for (const h of hosts) expect((await http1(w.address().http!.port, h, '/')).status, `${h} on a worker`).to.equal(200);
    }
    expect(manager.sharedConnectionCount).to.equal(2);
    expect(manager.status().map((s) => s.wanted)).to.deep.equal([2, 2, 2]);
  });

  it('gives each binding one connection per worker in protocol version 1 too (connections of its own)', async () => {
    const keys = await startWorkers();
    const dialer = new WorkerDialer(() => workers.map((w) => w.address().tunnel.port));
    manager = new TunnelManager(dialer, new SystemClock(), new TestStreamHandler(), new StaticKeySource(keys), { backoff: { baseMs: 100, maxMs: 400 } });
    manager.apply(hosts.map((h) => ({ bindingId: idOf(h), edges: [{ host: '127.0.0.1', port: 1, tls: false }], keyRef: idOf(h) })));
    await waitUntil(() => workers.every((w) => hosts.every((h) => w.registry.count().get(idOf(h)) === 1)), 10_000);
    for (const w of workers) {
      expect(w.registry.shared()).to.have.length(0);
      for (const h of hosts) expect((await http1(w.address().http!.port, h, '/')).status, `${h} on a worker`).to.equal(200);
    }
    expect(manager.status().map((s) => s.wanted)).to.deep.equal([2, 2, 2]);
  });

  it('gives up on a worker after a bounded number of dials when every connection reaches the other one', async () => {
    const keys = await startWorkers();
    // a primary that hands everything to worker 0: worker 1 is never reached
    const dialer = new WorkerDialer(() => [workers[0]!.address().tunnel.port]);
    manager = managerWith(dialer, keys);
    const errors: Error[] = [];
    manager.on('tunnel-error', (_id: string, err: Error) => errors.push(err));
    manager.apply([{ bindingId: idOf('a.test'), edges: [{ host: '127.0.0.1', port: 1, tls: false }], keyRef: idOf('a.test') }]);
    await waitUntil(() => errors.some((e) => (e as { code?: string }).code === 'TUNA_EDGE_WORKER_MISSED'), 10_000);
    expect(workers[0]!.registry.count().get(idOf('a.test'))).to.equal(1);
    expect(workers[1]!.registry.all()).to.have.length(0);
    manager.destroy();
    // the first connection (any worker), one series of dials for worker 1, perhaps retries begun
    expect(dialer.dials).to.be.at.most(1 + 3 * WORKER_DIALS_PER_WORKER * 2);
  });
});
