import { expect } from 'chai';
import { once } from 'node:events';
import { createServer, request } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createControlApi } from '../../src/edge/control/index.js';
import type { ControlApiOptions } from '../../src/edge/control/index.js';
import { openSqliteStore } from '../../src/edge/store/index.js';
import type { Account, Store } from '../../src/edge/store/index.js';
import { FakeClock } from '../support/postgres.js';

/** Control API security over real HTTP on 127.0.0.1: authentication, scopes, brute force, body limits. */
describe('control API: authentication, scopes and limits', function () {
  this.timeout(60_000);
  let store: Store;
  let server: Server;
  let base: string;
  let clock: FakeClock;
  let account: Account;
  let adminToken: string;
  let logLines: string[];

  async function start(extra: Partial<ControlApiOptions> = {}): Promise<void> {
    server = createServer(createControlApi({ store, clock, baseDomain: 'edge.test', portPool: { first: 30000, last: 30009 }, log: (l) => logLines.push(l), ...extra }));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  async function call(method: string, path: string, token?: string, body?: unknown) {
    const headers: Record<string, string> = {};
    if (token !== undefined) headers['authorization'] = `Bearer ${token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const json = (await res.json()) as Record<string, unknown> & { error?: { code: string; message: string; field?: string } };
    return { status: res.status, headers: res.headers, json };
  }

  async function keyWith(scopes: ('reservations' | 'tunnels' | 'admin')[]): Promise<string> {
    return (await store.createApiKey({ accountId: account.id, name: scopes.join('+'), scopes }, 'test')).token;
  }

  beforeEach(async () => {
    clock = new FakeClock();
    logLines = [];
    store = await openSqliteStore(':memory:', clock);
    account = await store.createAccount({ name: 'acme' }, 'init');
    adminToken = await keyWith(['admin']);
  });
  afterEach(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await store.close();
  });

  it('answers 401 with the same body for no key, a malformed key, a wrong secret and a tunnel key', async () => {
    await start();
    const { reservation } = await store.createReservation({ accountId: account.id, spec: { kind: 'tcp-port', port: 30000 } }, 't');
    const tunnel = await store.mintTunnelKey({ accountId: account.id, reservationId: reservation.id, protocol: 'tcp', maxConnections: 1, expiresAt: clock.now() + 60_000 }, 't');
    const wrong = adminToken.slice(0, -1) + (adminToken.endsWith('A') ? 'B' : 'A');
    const answers = await Promise.all([undefined, 'garbage', wrong, tunnel.token].map((t) => call('GET', '/v1/account', t)));
    for (const answer of answers) {
      expect(answer.status).to.equal(401);
      expect(answer.headers.get('www-authenticate')).to.equal('Bearer realm="tuna"');
      expect(answer.json).to.deep.equal(answers[0]!.json);
    }
    expect(answers[0]!.json.error?.code).to.equal('TUNA_CONTROL_UNAUTHORIZED');
  });

  it('answers 403 when a key lacks the scope: a reservations key cannot create accounts, a tunnels key cannot reserve', async () => {
    await start();
    const reservations = await keyWith(['reservations']);
    const tunnels = await keyWith(['tunnels']);
    expect((await call('POST', '/v1/accounts', reservations, { name: 'x' })).status).to.equal(403);
    expect((await call('POST', '/v1/reservations', tunnels, { kind: 'tcp-port' })).status).to.equal(403);
    expect((await call('POST', '/v1/tunnel-keys', tunnels, { reservationId: 'x', protocol: 'tcp' })).status).to.equal(403);
    expect((await store.listAccounts()).length).to.equal(1);
    expect(await store.listReservations(account.id)).to.deep.equal([]);
  });

  it('answers 429 with Retry-After once one client has sent too many wrong keys, even for a valid key', async () => {
    await start();
    let limitedAt = -1;
    for (let i = 0; i < 1000 && limitedAt < 0; i++) {
      const { status } = await call('GET', '/v1/account', `tuna_ak_${'0'.repeat(16)}_${'x'.repeat(43)}`);
      if (status === 429) limitedAt = i;
      else expect(status).to.equal(401);
    }
    expect(limitedAt).to.be.within(1, 999);
    const valid = await call('GET', '/v1/account', adminToken);
    expect(valid.status).to.equal(429);
    expect(Number(valid.headers.get('retry-after'))).to.be.greaterThan(0);
    clock.advance(60_000);
    expect((await call('GET', '/v1/account', adminToken)).status).to.equal(200);
  });

  it('never counts requests with a valid key against the limit', async () => {
    await start({ rateLimit: { capacity: 3, refillPerSecond: 1 } });
    for (let i = 0; i < 10; i++) expect((await call('GET', '/v1/account', adminToken)).status).to.equal(200);
  });

  it('answers 413 to a 10 MiB body with a declared length and closes the connection', async () => {
    await start();
    const { status, body, connection } = await new Promise<{ status: number; body: string; connection?: string }>((resolve, reject) => {
      const req = request(`${base}/v1/accounts`, {
        method: 'POST',
        headers: { 'authorization': `Bearer ${adminToken}`, 'content-type': 'application/json', 'content-length': 10 * 1024 * 1024 },
      });
      req.on('response', (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, connection: res.headers.connection }));
      });
      req.on('error', reject);
      req.write(Buffer.alloc(64 * 1024, 0x20));
    });
    expect(status).to.equal(413);
    expect(connection).to.equal('close');
    expect(JSON.parse(body)).to.have.nested.property('error.code', 'TUNA_CONTROL_BODY_TOO_LARGE');
  });

  it('answers 413 to a chunked body that grows past the limit', async () => {
    await start({ maxBodyBytes: 1024 });
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(`${base}/v1/accounts`, { method: 'POST', headers: { 'authorization': `Bearer ${adminToken}`, 'content-type': 'application/json' } });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.write('{"name":"');
      req.write('x'.repeat(4096));
    });
    expect(status).to.equal(413);
    expect((await store.listAccounts()).length).to.equal(1);
  });

  it('answers 400 naming the field for a wrong type, an unknown field and a missing field', async () => {
    await start();
    const token = await keyWith(['reservations']);
    const cases: [unknown, string][] = [
      [{ kind: 'domain', hostname: 5 }, 'hostname'],
      [{ kind: 'tcp-port', lables: {} }, 'lables'],
      [{ hostname: 'a.edge.test' }, 'kind'],
      [{ kind: 'domain', hostname: 'a.edge.test', labels: { a: 1 } }, 'labels.a'],
      [{ kind: 'domain' }, 'hostname'],
      [{ kind: 'domain', hostname: "x'; DROP TABLE reservations;--" }, 'spec.hostname'],
    ];
    for (const [body, field] of cases) {
      const answer = await call('POST', '/v1/reservations', token, body);
      expect(answer.status, JSON.stringify(body)).to.equal(400);
      expect(answer.json.error, JSON.stringify(body)).to.include({ code: 'TUNA_CONTROL_INVALID', field });
    }
  });

  it('answers 400 to a body that is not JSON and 404 to an unknown endpoint', async () => {
    await start();
    const res = await fetch(`${base}/v1/accounts`, { method: 'POST', headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' }, body: '{nope' });
    expect(res.status).to.equal(400);
    expect((await call('GET', '/v1/nothing-here', adminToken)).status).to.equal(404);
    expect((await call('PUT', '/v1/accounts', adminToken)).status).to.equal(405);
  });

  it('answers 500 without detail and logs no key when the store fails', async () => {
    await start();
    await store.close();
    const answer = await call('GET', '/v1/account', adminToken);
    expect(answer.status).to.equal(500);
    expect(answer.json.error?.code).to.equal('TUNA_CONTROL_INTERNAL');
    expect(logLines).to.have.length(1);
    expect(logLines.join('\n')).not.to.include(adminToken.slice(25));
    store = await openSqliteStore(':memory:', clock);
  });
});
