import { expect } from 'chai';
import { createConnection, createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import { parseScaleArgs } from '../index.js';
import { establishedTo, sampleProcess, waitAll200 } from '../measure.js';
import { renderScaleTable } from '../table.js';
import type { ScaleRow } from '../table.js';

describe('scale bench: flags, table and what it reads from /proc', () => {
  it('takes the default host counts and the flags given', () => {
    expect(parseScaleArgs([])).to.deep.equal({ hosts: [100, 1000, 5000, 10000], batch: 2000, idleSeconds: 60, batchTimeoutSeconds: 600, rounds: 5 });
    expect(parseScaleArgs(['--rounds', '9'])).to.deep.include({ rounds: 9 });
    expect(parseScaleArgs(['--hosts', '100,1000', '--idle-seconds', '20'])).to.deep.include({ hosts: [100, 1000], idleSeconds: 20 });
  });

  for (const [args, flag] of [
    [['--hosts', '100,x'], '--hosts'],
    [['--batch', '2001'], '--batch'],
    [['--idle-seconds', '0'], '--idle-seconds'],
    [['--rounds', '0'], '--rounds'],
    [['--hosts', '1000,100'], '--hosts'],
    [['--wat', '1'], '--wat'],
  ] as const) {
    it(`refuses ${args.join(' ')} naming ${flag}`, () => {
      expect(() => parseScaleArgs(args)).to.throw(flag);
    });
  }

  it('renders a row that never reached 200 with what the last round answered', () => {
    const row: ScaleRow = {
      hosts: 7000,
      batch: { added: 1000, createMs: 4000, allMs: 600_000, pending: 12, lastStatuses: { '503': 12 } },
      oneNew: { asked: 5, rounds: [] },
      operator: { rssBytes: 2 ** 30, cpuSeconds: 12.34, fds: 100 },
      edge: { rssBytes: 2 ** 29, cpuSeconds: 1, fds: 50 },
      connections: 14000,
      controlCalls: 1234,
      idle: { seconds: 60, operatorCpuPercent: 0.5, edgeCpuPercent: 0.25, controlCallsPerMinute: 0 },
    };
    const table = renderScaleTable([row]);
    expect(table).to.include('**never** within 600.0 s: 12 of +1,000 not 200 (last round: 12× 503)');
    expect(table).to.include('| 7,000 |');
    expect(table).to.include('1,024 MiB');
    const rounds = { asked: 5, rounds: [310, 250, 990, 270], createMs: 21, syncs: { count: 2, ms: 180, phases: { translate: 20, admit: 10, reconcile: 60, apply: 40, status: 30 } } };
    expect(renderScaleTable([{ ...row, oneNew: rounds }])).to.include('| 310 ms (250–990, 4 rounds; round 5 **never**) | create 21 ms; 2 syncs 180 ms (20 / 10 / 60 / 40 / 30) |');
    expect(renderScaleTable([{ ...row, failure: 'operator exited SIGABRT: # Assertion failed: a | b' }])).to.include('**failed**: operator exited SIGABRT: # Assertion failed: a / b');
  });

  it('counts established connections to a loopback port and samples this process', async () => {
    const server: Server = createServer(() => undefined);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const sockets: Socket[] = await Promise.all(
      [1, 2, 3].map(() => new Promise<Socket>((resolve) => { const s = createConnection(port, '127.0.0.1', () => resolve(s)); })),
    );
    try {
      expect(establishedTo(port)).to.equal(3);
    } finally {
      sockets.forEach((s) => s.destroy());
      await new Promise((resolve) => server.close(resolve));
    }
    const me = sampleProcess(process.pid);
    expect(me.rssBytes).to.be.greaterThan(0);
    expect(me.cpuSeconds).to.be.greaterThan(0);
    expect(me.fds).to.be.greaterThan(2);
  });

  it('stops asking a host once it answered 200 and gives up at the bound on one that never does', async () => {
    const asked: Record<string, number> = {};
    const { createServer: createHttp } = await import('node:http');
    const server = createHttp((req, res) => {
      const host = req.headers.host ?? '';
      asked[host] = (asked[host] ?? 0) + 1;
      res.writeHead(host === 'ok.test' ? 200 : 503).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as { port: number }).port;
      const result = await waitAll200(port, ['ok.test', 'down.test'], 1_000);
      expect(result.pending).to.equal(1);
      expect(result.lastStatuses).to.deep.equal({ '503': 1 });
      expect(asked['ok.test']).to.equal(1);
      expect(asked['down.test']).to.be.greaterThan(1);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
