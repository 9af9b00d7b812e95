import { expect } from 'chai';
import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeEdgeConfig, startEdge } from '../../src/edge/index.js';
import type { EdgeServer } from '../../src/edge/index.js';
import { getVia, newKey, startCli } from '../support/backend-cli.js';
import type { CliRun } from '../support/backend-cli.js';
import { startHttpBackend } from '../support/backend-servers.js';
import type { EchoReply, TestBackend } from '../support/backend-servers.js';
import { loopbackService } from '../support/loopback-service.js';

describe('tuna http, tcp and run against a real edge', function () {
  this.timeout(30_000);
  const { key, sha256 } = newKey();
  let edge: EdgeServer | undefined;
  let runs: CliRun[] = [];
  let backends: TestBackend[] = [];
  let dirs: string[] = [];

  async function edgeWith(bindings: unknown[]): Promise<{ http: number; tunnel: number }> {
    edge = await startEdge(decodeEdgeConfig({ listen: { tunnel: { host: '127.0.0.1', port: 0 }, http: { host: '127.0.0.1', port: 0 } }, bindings }));
    const a = edge.address();
    return { http: a.http!.port, tunnel: a.tunnel.port };
  }

  const hostBinding = (host: string) => ({ id: `binding/host/${host}`, kind: 'host', hostnames: [host], keys: [{ sha256 }] });

  function cli(argv: string[], env: NodeJS.ProcessEnv = {}): CliRun {
    const run = startCli(argv, env);
    runs.push(run);
    return run;
  }

  afterEach(async () => {
    for (const r of runs) r.stop();
    await Promise.all(runs.map((r) => r.exit.catch(() => 0)));
    await edge?.close();
    await Promise.all(backends.map((b) => b.close()));
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    runs = [];
    backends = [];
    dirs = [];
    edge = undefined;
  });

  it('publishes a local port with tuna http and stops cleanly', async () => {
    const backend = await startHttpBackend('local');
    backends.push(backend);
    const ports = await edgeWith([hostBinding('app.test')]);
    const run = cli(['http', String(backend.port), '--host', 'app.test', '--edge', `tcp://127.0.0.1:${ports.tunnel}`], { TUNA_KEY: key });
    await run.waitForOut('Forwarding app.test');
    const res = await getVia(ports.http, 'app.test', '/hello?x=1');
    expect(res.status).to.equal(200);
    expect((JSON.parse(res.body) as EchoReply).url).to.equal('/hello?x=1');
    run.stop();
    expect(await run.exit).to.equal(0);
  });

  it('lets an in-flight request finish when tuna http is stopped', async () => {
    let arrived: () => void = () => undefined;
    const isArrived = new Promise<void>((r) => (arrived = r));
    let release: () => void = () => undefined;
    const released = new Promise<void>((r) => (release = r));
    const slow = await startHttpBackend('slow', (_req, res) => {
      arrived();
      void released.then(() => res.end('finished'));
    });
    backends.push(slow);
    const ports = await edgeWith([hostBinding('app.test')]);
    const run = cli(['http', String(slow.port), '--host', 'app.test', '--edge', `tcp://127.0.0.1:${ports.tunnel}`, '--key', key]);
    await run.waitForOut('Forwarding app.test');
    const pending = getVia(ports.http, 'app.test', '/slow');
    await isArrived;
    run.stop();
    // The agent is draining (GOAWAY sent); the request already on the tunnel must still complete.
    await new Promise((r) => setTimeout(r, 100));
    release();
    expect(await pending).to.deep.equal({ status: 200, body: 'finished' });
    expect(await run.exit).to.equal(0);
  });

  it('exits with a clear message when the edge refuses the key', async () => {
    const ports = await edgeWith([hostBinding('app.test')]);
    const run = cli(['http', '1', '--no-check', '--host', 'app.test', '--edge', `tcp://127.0.0.1:${ports.tunnel}`, '--key', 'not-the-key']);
    expect(await run.exit).to.equal(77);
    expect(run.err.join('\n')).to.match(/refused the tunnel.*check --key/);
    expect(run.err.join('\n')).not.to.contain('not-the-key');
  });

  it('exits with a clear message when nothing listens at the edge address', async () => {
    const spare = net.createServer();
    await new Promise<void>((r) => spare.listen(0, '127.0.0.1', r));
    const port = (spare.address() as AddressInfo).port;
    await new Promise((r) => spare.close(r));
    const run = cli(['http', '1', '--no-check', '--edge', `tcp://127.0.0.1:${port}`, '--key', key]);
    expect(await run.exit).to.equal(69);
    expect(run.err.join('\n')).to.match(/cannot reach edge .*check --edge/);
  });

  it('warns when nothing listens on the local port, and still publishes it', async () => {
    const spare = net.createServer();
    await new Promise<void>((r) => spare.listen(0, '127.0.0.1', r));
    const port = (spare.address() as AddressInfo).port;
    await new Promise((r) => spare.close(r));
    const ports = await edgeWith([hostBinding('app.test')]);
    const run = cli(['http', String(port), '--host', 'app.test', '--edge', `tcp://127.0.0.1:${ports.tunnel}`, '--key', key]);
    await run.waitForOut('Forwarding');
    expect(run.err.join('\n')).to.contain(`nothing accepts connections on 127.0.0.1:${port}`);
    expect((await getVia(ports.http, 'app.test', '/')).status).to.equal(502);
  });

  it('publishes a TCP port with tuna tcp', async () => {
    const echo = net.createServer((s) => s.pipe(s));
    await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r));
    const echoPort = (echo.address() as AddressInfo).port;
    backends.push({ port: echoPort, requests: [], server: echo as never, close: () => new Promise((r) => echo.close(() => r())) });
    const bindingId = `binding/tcp-port/local/tcp/${echoPort}`;
    // Port 0 on both sides: the edge picks a free port (no race for a guessed one) and the agent
    // asks for "any"; the edge reports what it bound.
    const ports = await edgeWith([{ id: bindingId, kind: 'tcp-port', port: 0, keys: [{ sha256 }] }]);
    const run = cli(['tcp', String(echoPort), '--remote-port', '0', '--edge', `tcp://127.0.0.1:${ports.tunnel}`, '--key', key]);
    await run.waitForOut('Forwarding edge TCP binding');
    const publicPort = edge!.address().bindings.get(bindingId)?.[0]?.port;
    expect(publicPort).to.be.a('number');
    const reply = await new Promise<string>((resolve, reject) => {
      const s = net.connect({ host: '127.0.0.1', port: publicPort! });
      let data = '';
      s.on('data', (c: Buffer) => (data += c.toString()));
      s.once('end', () => resolve(data));
      s.once('error', reject);
      s.end('hello tcp');
    });
    expect(reply, run.err.join('\n')).to.equal('hello tcp');
  });

  it('publishes a UDP port with tuna udp', async () => {
    const echo = createSocket('udp4');
    echo.on('message', (msg, remote) => echo.send(msg, remote.port, remote.address));
    echo.bind(0, '127.0.0.1');
    await once(echo, 'listening');
    const echoPort = echo.address().port;
    backends.push({ port: echoPort, requests: [], server: echo as never, close: () => new Promise((r) => echo.close(() => r())) });
    const bindingId = `binding/tcp-port/local/udp/${echoPort}`;
    const ports = await edgeWith([{ id: bindingId, kind: 'tcp-port', port: 0, transports: ['udp'], keys: [{ sha256 }] }]);
    const run = cli(['udp', String(echoPort), '--edge', `tcp://127.0.0.1:${ports.tunnel}`, '--key', key]);
    await run.waitForOut('Forwarding edge UDP binding');
    expect(run.out.join('\n')).to.contain(`Public address: the UDP port the edge opened for ${bindingId}`);
    const publicPort = edge!.address().udp.get(bindingId)?.[0]?.port;
    expect(publicPort).to.be.a('number');
    expect(edge!.address().bindings.get(bindingId), 'a UDP-only port opens no TCP listener').to.equal(undefined);
    const client = createSocket('udp4');
    try {
      const reply = once(client, 'message');
      client.send('hello udp', publicPort!, '127.0.0.1');
      const [msg] = (await Promise.race([reply, new Promise((_, reject) => setTimeout(() => reject(new Error('no echo in 5 s')), 5000))])) as [Buffer];
      expect(msg.toString(), run.err.join('\n')).to.equal('hello udp');
    } finally {
      client.close();
    }
    // the open flow ends as the agent stops: it does not hold the tunnel until the 30 s drain timeout
    const stoppedAt = Date.now();
    run.stop();
    expect(await run.exit).to.equal(0);
    expect(Date.now() - stoppedAt).to.be.below(10_000);
  });

  it('reloads changed manifests in tuna run without reconnecting the tunnel', async () => {
    const a = await startHttpBackend('a');
    const b = await startHttpBackend('b');
    backends.push(a, b);
    const dir = mkdtempSync(join(tmpdir(), 'tuna-run-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'objects.yaml'), manifests('a', a.port, b.port));
    const ports = await edgeWith([hostBinding('run.test')]);
    const run = cli(['run', '--manifests', dir, '--edge', `tcp://127.0.0.1:${ports.tunnel}`, '--key', key]);
    await run.waitForOut('Serving');
    expect((JSON.parse((await getVia(ports.http, 'run.test', '/')).body) as EchoReply).backend).to.equal('a');
    const before = edge!.registry.all().map((t) => t.connectionId);
    writeFileSync(join(dir, 'objects.yaml'), manifests('b', a.port, b.port));
    await run.waitForOut('Reloaded manifests: routes updated, tunnels untouched');
    expect((JSON.parse((await getVia(ports.http, 'run.test', '/')).body) as EchoReply).backend).to.equal('b');
    expect(edge!.registry.all().map((t) => t.connectionId)).to.deep.equal(before);
  });

  it('runs an edge from a config file with tuna edge and drains it on stop', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tuna-edge-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'edge.yaml'), `listen:\n  tunnel: {host: 127.0.0.1, port: 0}\n  http: {host: 127.0.0.1, port: 0}\nbindings:\n  - {id: binding/host/e.test, kind: host, hostnames: [e.test], keys: [{sha256: ${sha256}}]}\n`);
    const run = cli(['edge', '--config', join(dir, 'edge.yaml'), '--workers', '1']);
    const line = await run.waitForOut('tunnel listener on port');
    const [, tunnel, http] = /port (\d+), public HTTP on port (\d+)/.exec(line)!;
    const agent = cli(['http', '1', '--no-check', '--host', 'e.test', '--edge', `tcp://127.0.0.1:${tunnel!}`, '--key', key]);
    await agent.waitForOut('Forwarding e.test');
    expect((await getVia(Number(http), 'e.test', '/')).status).to.equal(502);
    run.stop();
    expect(await run.exit).to.equal(0);
  });

  it('refuses an invalid edge config with exit status 78', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tuna-edge-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'edge.yaml'), 'listen: {http: {port: 80}}\n');
    const run = cli(['edge', '--config', join(dir, 'edge.yaml'), '--workers', '1']);
    expect(await run.exit).to.equal(78);
    expect(run.err.join('\n')).to.contain('invalid edge config');
  });
});

/** manifests: an Ingress on run.test whose / goes to Service `target`, and Services a and b. */
function manifests(target: string, portA: number, portB: number): string {
  const svc = loopbackService;
  return `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: site, namespace: default}
spec:
  ingressClassName: tuna
  rules:
    - host: run.test
      http:
        paths:
          - {path: /, pathType: Prefix, backend: {service: {name: ${target}, port: {name: http}}}}
${svc('a', portA)}${svc('b', portB)}`;
}
