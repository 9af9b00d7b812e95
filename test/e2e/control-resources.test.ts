import { expect } from 'chai';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createControlApi } from '../../src/edge/control/index.js';
import type { ControlApiOptions } from '../../src/edge/control/index.js';
import { openSqliteStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';
import { FakeClock } from '../support/postgres.js';

type Json = Record<string, unknown> & { error?: { code: string; field?: string } };

/** Control API resources over real HTTP on 127.0.0.1: accounts, keys, reservations, tunnel keys, audit. */
describe('control API: accounts, reservations and tunnel keys', function () {
  this.timeout(60_000);
  let store: Store;
  let server: Server;
  let base: string;
  let clock: FakeClock;
  let adminToken: string;
  let revoked: string[][];
  let verified: Map<string, string>;

  async function start(extra: Partial<ControlApiOptions> = {}): Promise<void> {
    const api = createControlApi({
      store,
      clock,
      baseDomain: 'edge.test',
      portPool: { first: 30000, last: 30009 },
      addressPool: '127.77.0.0/29',
      onTunnelKeysRevoked: (ids) => revoked.push([...ids]),
      verifyDomain: async (hostname, token) => verified.get(hostname) === token,
      ...extra,
    });
    server = createServer(api);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  async function call(method: string, path: string, token: string, body?: unknown): Promise<{ status: number; json: Json }> {
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: res.status, json: (await res.json()) as Json };
  }

  /** newTenant creates an account and a `reservations` key for it through the API, as an admin would. */
  async function newTenant(name: string): Promise<{ accountId: string; token: string }> {
    const account = await call('POST', '/v1/accounts', adminToken, { name });
    expect(account.status).to.equal(201);
    const accountId = (account.json['account'] as { id: string }).id;
    const key = await call('POST', '/v1/api-keys', adminToken, { name: 'operator', scopes: ['reservations'], accountId });
    expect(key.status).to.equal(201);
    return { accountId, token: key.json['token'] as string };
  }

  beforeEach(async () => {
    clock = new FakeClock();
    revoked = [];
    verified = new Map();
    store = await openSqliteStore(':memory:', clock);
    const root = await store.createAccount({ name: 'edge-admins' }, 'init');
    adminToken = (await store.createApiKey({ accountId: root.id, name: 'root', scopes: ['admin'] }, 'init')).token;
    await start();
  });
  afterEach(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await store.close();
  });

  it('reserves a subdomain (201), adopts it on a repeat (200) and refuses it to another account (409)', async () => {
    const a = await newTenant('a');
    const b = await newTenant('b');
    const body = { kind: 'domain', hostname: 'web.edge.test', labels: { cluster: 'c1' } };
    const first = await call('POST', '/v1/reservations', a.token, body);
    expect(first.status).to.equal(201);
    expect(first.json['reservation']).to.include({ value: 'web.edge.test', domainType: 'subdomain', verified: true });
    const again = await call('POST', '/v1/reservations', a.token, body);
    expect(again.status).to.equal(200);
    expect((again.json['reservation'] as { id: string }).id).to.equal((first.json['reservation'] as { id: string }).id);
    const other = await call('POST', '/v1/reservations', b.token, body);
    expect(other.status).to.equal(409);
    expect(other.json.error?.code).to.equal('TUNA_STORE_CONFLICT');
  });

  it('refuses a nested subdomain of the base domain with field hostname', async () => {
    const a = await newTenant('a');
    const answer = await call('POST', '/v1/reservations', a.token, { kind: 'domain', hostname: 'x.y.edge.test' });
    expect(answer.status).to.equal(400);
    expect(answer.json.error?.field).to.equal('hostname');
  });

  it('verifies a custom domain only once its challenge record holds the token', async () => {
    const a = await newTenant('a');
    const created = await call('POST', '/v1/reservations', a.token, { kind: 'domain', hostname: 'shop.example.com' });
    const reservation = created.json['reservation'] as { id: string; verified: boolean; verificationToken: string };
    expect(reservation.verified).to.equal(false);
    const early = await call('POST', `/v1/reservations/${reservation.id}/verify`, a.token);
    expect(early.status).to.equal(409);
    expect(early.json.error?.code).to.equal('TUNA_CONTROL_DOMAIN_UNVERIFIED');
    verified.set('shop.example.com', reservation.verificationToken);
    const later = await call('POST', `/v1/reservations/${reservation.id}/verify`, a.token);
    expect(later.status).to.equal(200);
    expect(later.json['reservation']).to.include({ verified: true });
  });

  it('allocates TCP ports and addresses from the pools and lists reservations by label selector', async () => {
    const a = await newTenant('a');
    const p1 = await call('POST', '/v1/reservations', a.token, { kind: 'tcp-port', name: 'default/ssh', labels: { cluster: 'c1' } });
    const p2 = await call('POST', '/v1/reservations', a.token, { kind: 'tcp-port', labels: { cluster: 'c2' } });
    const ip = await call('POST', '/v1/reservations', a.token, { kind: 'address', labels: { cluster: 'c1' } });
    expect([p1.status, p2.status, ip.status]).to.deep.equal([201, 201, 201]);
    expect([p1, p2, ip].map((r) => (r.json['reservation'] as { value: string }).value)).to.deep.equal(['30000', '30001', '127.77.0.1']);
    const listed = await call('GET', `/v1/reservations?selector=${encodeURIComponent('cluster=c1')}`, a.token);
    expect((listed.json['reservations'] as { value: string }[]).map((r) => r.value)).to.deep.equal(['127.77.0.1', '30000']);
    const repeat = await call('POST', '/v1/reservations', a.token, { kind: 'tcp-port', name: 'default/ssh', labels: { cluster: 'c1' } });
    expect(repeat.status).to.equal(200);
  });

  it('answers 404 for another account\'s reservation and tunnel key', async () => {
    const a = await newTenant('a');
    const b = await newTenant('b');
    const created = await call('POST', '/v1/reservations', a.token, { kind: 'tcp-port', port: 30005 });
    const id = (created.json['reservation'] as { id: string }).id;
    const minted = await call('POST', '/v1/tunnel-keys', a.token, { reservationId: id, protocol: 'tcp' });
    const keyId = (minted.json['tunnelKey'] as { id: string }).id;
    expect((await call('GET', `/v1/reservations/${id}`, b.token)).status).to.equal(404);
    expect((await call('DELETE', `/v1/reservations/${id}`, b.token)).status).to.equal(404);
    expect((await call('DELETE', `/v1/tunnel-keys/${keyId}`, b.token)).status).to.equal(404);
    expect((await call('POST', '/v1/tunnel-keys', b.token, { reservationId: id, protocol: 'tcp' })).status).to.equal(404);
    expect(revoked).to.deep.equal([]);
  });

  it('mints a tunnel key that the edge accepts, lists it by label, rotates and revokes it with a revocation event', async () => {
    const a = await newTenant('a');
    const created = await call('POST', '/v1/reservations', a.token, { kind: 'domain', hostname: 'web.edge.test' });
    const reservationId = (created.json['reservation'] as { id: string }).id;
    const labels = { 'cluster': 'c1', 'owner-uid': 'u1' };
    const minted = await call('POST', '/v1/tunnel-keys', a.token, { reservationId, protocol: 'https', maxConnections: 2, ttlSeconds: 3600, labels });
    expect(minted.status).to.equal(201);
    const key = minted.json['tunnelKey'] as { id: string; expiresAt: number };
    expect(key.expiresAt).to.equal(clock.now() + 3_600_000);
    expect((await store.authenticateTunnelKey(minted.json['token'] as string)).ok).to.equal(true);
    for (const query of [`selector=${encodeURIComponent('owner-uid=u1,cluster=c1')}`, 'label.owner-uid=u1']) {
      const listed = await call('GET', `/v1/tunnel-keys?${query}`, a.token);
      expect((listed.json['tunnelKeys'] as { id: string }[]).map((k) => k.id), query).to.deep.equal([key.id]);
    }
    const none = await call('GET', '/v1/tunnel-keys?label.owner-uid=u2', a.token);
    expect(none.json['tunnelKeys']).to.deep.equal([]);
    const rotated = await call('POST', `/v1/tunnel-keys/${key.id}/rotate`, a.token, { ttlSeconds: 7200 });
    expect(rotated.status).to.equal(200);
    expect(await store.authenticateTunnelKey(minted.json['token'] as string)).to.deep.equal({ ok: false, reason: 'wrong-secret' });
    const removed = await call('DELETE', `/v1/tunnel-keys/${key.id}`, a.token);
    expect(removed.status).to.equal(200);
    expect(revoked).to.deep.equal([[key.id]]);
    expect(await store.authenticateTunnelKey(rotated.json['token'] as string)).to.deep.equal({ ok: false, reason: 'revoked' });
  });

  it('refuses a tunnel key for a protocol the reservation cannot carry with field protocol', async () => {
    const a = await newTenant('a');
    const created = await call('POST', '/v1/reservations', a.token, { kind: 'domain', hostname: 'web.edge.test' });
    const answer = await call('POST', '/v1/tunnel-keys', a.token, { reservationId: (created.json['reservation'] as { id: string }).id, protocol: 'tcp' });
    expect(answer.status).to.equal(400);
    expect(answer.json.error?.field).to.equal('protocol');
  });

  it('releases a reservation and reports its revoked tunnel keys to the edge', async () => {
    const a = await newTenant('a');
    const created = await call('POST', '/v1/reservations', a.token, { kind: 'tcp-port', port: 30003 });
    const reservationId = (created.json['reservation'] as { id: string }).id;
    const k1 = await call('POST', '/v1/tunnel-keys', a.token, { reservationId, protocol: 'tcp' });
    const k2 = await call('POST', '/v1/tunnel-keys', a.token, { reservationId, protocol: 'tcp' });
    const released = await call('DELETE', `/v1/reservations/${reservationId}`, a.token);
    expect(released.status).to.equal(200);
    const ids = [k1, k2].map((k) => (k.json['tunnelKey'] as { id: string }).id).sort();
    expect(released.json['revokedTunnelKeyIds']).to.deep.equal(ids);
    expect(revoked.map((r) => [...r].sort())).to.deep.equal([ids]);
  });

  it('records every change in the audit log under the acting key, without any token', async () => {
    const a = await newTenant('a');
    await call('POST', '/v1/reservations', a.token, { kind: 'tcp-port', port: 30001 });
    const keys = await call('GET', `/v1/api-keys?accountId=${a.accountId}`, adminToken);
    const operatorKeyId = (keys.json['apiKeys'] as { id: string }[])[0]!.id;
    const events = await store.listAuditEvents({ accountId: a.accountId });
    expect(events.map((e) => e.action)).to.deep.equal(['account.create', 'api-key.create', 'reservation.create']);
    expect(events[2]!.actor).to.equal(`apikey:${operatorKeyId}`);
    expect(JSON.stringify(events)).not.to.include(a.token.slice(25));
  });

  it('answers GET /v1/audit?accountId= with that account\'s events only, and the caller\'s own without it', async () => {
    const a = await newTenant('a');
    const b = await newTenant('b');
    await call('POST', '/v1/reservations', a.token, { kind: 'tcp-port', port: 30001 });
    await call('POST', '/v1/reservations', b.token, { kind: 'tcp-port', port: 30002 });
    const ofA = await call('GET', `/v1/audit?accountId=${a.accountId}`, adminToken);
    expect(ofA.status).to.equal(200);
    const eventsOfA = ofA.json['events'] as { accountId: string; action: string }[];
    expect(eventsOfA.map((e) => e.action)).to.deep.equal(['account.create', 'api-key.create', 'reservation.create']);
    expect(eventsOfA.every((e) => e.accountId === a.accountId)).to.equal(true);
    const ofB = await call('GET', `/v1/audit?accountId=${b.accountId}&afterSeq=0&limit=1`, adminToken);
    expect((ofB.json['events'] as { accountId: string; action: string }[]).map((e) => [e.accountId, e.action])).to.deep.equal([[b.accountId, 'account.create']]);
    // Without accountId: the caller's own account (the admins' account: its creation and its key).
    const own = await call('GET', '/v1/audit', adminToken);
    expect((own.json['events'] as { action: string }[]).map((e) => e.action)).to.deep.equal(['account.create', 'api-key.create']);
  });

  it('stores SQL injection strings sent through the API verbatim', async () => {
    const a = await newTenant("a'); DROP TABLE accounts; --");
    const labels = { "x' OR '1'='1": 'Robert"); DELETE FROM reservations; --' };
    const created = await call('POST', '/v1/reservations', a.token, { kind: 'tcp-port', name: "n'; --", labels });
    expect(created.status).to.equal(201);
    expect(created.json['reservation']).to.deep.include({ name: "n'; --", labels });
    const query = new URLSearchParams(Object.entries(labels).map(([k, v]): [string, string] => [`label.${k}`, v]));
    const listed = await call('GET', `/v1/reservations?${query.toString()}`, a.token);
    expect(listed.json['reservations']).to.have.length(1);
    const accounts = await call('GET', '/v1/accounts', adminToken);
    expect((accounts.json['accounts'] as { name: string }[]).map((x) => x.name)).to.include("a'); DROP TABLE accounts; --");
  });
});
