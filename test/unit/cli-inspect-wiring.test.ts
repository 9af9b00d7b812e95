import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from '../../src/agent/index.js';
import type { TunnelControl } from '../../src/agent/index.js';
import { createRuntime } from '../../src/cli/container.js';
import type { CliIo } from '../../src/cli/io.js';
import { runCli } from '../../src/cli/main.js';
import type { CliRuntime } from '../../src/cli/runtime.js';
import { DataPlane } from '../../src/dataplane/index.js';
import type { ExchangeObserver } from '../../src/dataplane/index.js';

/**
 * What `tuna http` hands the data plane: an observer only when the inspector runs. A runtime whose
 * agent has fake tunnels records the observer given to createAgent; Ctrl-C comes at once.
 */
describe('tuna http: the data plane gets the inspector as observer only when it runs', () => {
  async function observerFor(flags: string[], env: NodeJS.ProcessEnv = {}): Promise<{ observer: ExchangeObserver | undefined; out: string[]; err: string[]; code: number }> {
    let observer: ExchangeObserver | undefined;
    let created = 0;
    const tunnels: TunnelControl = { apply: () => Promise.resolve(), close: () => Promise.resolve() };
    const real = createRuntime();
    const runtime: CliRuntime = {
      ...real,
      createAgent: (_options, endpoints, _certificates, _log, given) => {
        created++;
        observer = given;
        return new Agent(new DataPlane({ endpoints, observer: given }), tunnels);
      },
    };
    const out: string[] = [];
    const err: string[] = [];
    const io: CliIo = { out: (l) => out.push(l), err: (l) => err.push(l), env: { TUNA_KEY: 'tuna_test_key', ...env }, stopSignal: Promise.resolve('SIGTERM') };
    const code = await runCli(['http', '3000', '--no-check', '--edge', 'tcp://127.0.0.1:1', ...flags], io, () => runtime);
    expect(created).to.equal(1);
    return { observer, out, err, code };
  }

  it('gives none with --inspect=false or TUNA_INSPECT=false', async () => {
    for (const [flags, env] of [[['--inspect=false'], {}], [[], { TUNA_INSPECT: 'false' }]] as const) {
      const got = await observerFor([...flags], env);
      expect(got.code).to.equal(0);
      expect(got.observer, JSON.stringify([flags, env])).to.equal(undefined);
      expect(got.out.join('\n')).not.to.contain('Inspector:');
    }
  });

  it('gives the inspector when it listens, and names its page in the banner', async () => {
    const got = await observerFor(['--inspect', '127.0.0.1:0']);
    expect(got.code).to.equal(0);
    expect(got.observer).to.not.equal(undefined);
    expect(got.out.some((l) => /^Inspector: http:\/\/127\.0\.0\.1:\d+\/$/.test(l))).to.equal(true);
  });

  it('gives none when its port is taken, after one warning', async () => {
    const blocker = http.createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    try {
      const port = (blocker.address() as AddressInfo).port;
      const got = await observerFor(['--inspect', `127.0.0.1:${port}`]);
      expect(got.code).to.equal(0);
      expect(got.observer).to.equal(undefined);
      expect(got.err.filter((l) => l.includes('inspector'))).to.have.length(1);
    } finally {
      await new Promise<void>((r) => blocker.close(() => r()));
    }
  });
});
