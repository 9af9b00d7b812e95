import { expect } from 'chai';
import { once } from 'node:events';
import { createServer as createHttpServer } from 'node:http';
import type { Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createControlApi } from '../../src/edge/control/index.js';
import type { ControlRoute } from '../../src/edge/control/index.js';
import { openSqliteStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';
import { BASE_DOMAIN, api, reserveAndMint, secretOf, seedAccount, startStoreEdge, storeEdgeConfig } from '../support/edge-store-harness.js';
import type { ApiAnswer, Seeded, StoreEdge } from '../support/edge-store-harness.js';
import { attack } from '../support/attack-log.js';

// Attacks on the control API by an anonymous client and by a hostile tenant: bad credentials on
// every endpoint of the route table, the scope matrix, another tenant's ids, and reservations
// outside the pools or on the edge's own ports (docs/security.md "Attack suite").

const ABSENT_ID = '0123456789abcdef';

/** routeTable is the control API's own table of routes (the one the edge serves), so a new endpoint is attacked without editing this file. */
function routeTable(store: Store): readonly ControlRoute[] {
  return createControlApi({ store, baseDomain: BASE_DOMAIN, verifyDomain: async () => false }).routes;
}

/** concrete turns a route's anchored pattern into a path, each capture group replaced by `id`. */
function concrete(route: ControlRoute, id: string): string {
  const path = route.path.source.replace(/^\^/, '').replace(/\$$/, '').replaceAll('([^/]+)', id).replaceAll('\\/', '/');
  expect(path, `a route pattern this suite can fill: ${route.path.source}`).to.match(/^\/v1(\/[\w.-]+)*$/);
  return path;
}

const label = (route: ControlRoute): string => `${route.method} ${route.path.source}`;

/** refusal is what an answer gives away: status, the WWW-Authenticate challenge and the body. */
function refusal(answer: ApiAnswer): string {
  return JSON.stringify({ status: answer.status, challenge: answer.headers['www-authenticate'], body: answer.body });
}

describe('attack: the control API', function () {
  this.timeout(60_000);
  let store: Store;
  let running: StoreEdge;
  let a: Seeded;
  let b: Seeded;

  beforeEach(async () => {
    store = await openSqliteStore(':memory:');
    running = await startStoreEdge(store);
    a = await seedAccount(store, 'tenant-a');
    b = await seedAccount(store, 'tenant-b');
  });

  afterEach(async () => {
    await running.edge.close();
    await store.close();
  });

  it('answers every route of the table, and /metrics, with one identical 401 to eight kinds of bad credential (no oracle)', async () => {
    const routes = routeTable(store);
    const tunnel = await reserveAndMint(running.controlPort, a.reservationsToken, { kind: 'domain', hostname: `a.${BASE_DOMAIN}` }, { protocol: 'http' });
    const revoked = await store.createApiKey({ accountId: a.accountId, name: 'revoked', scopes: ['admin'] }, 'test');
    await store.revokeApiKey(a.accountId, revoked.record.id, 'test');
    const disabledAccount = await seedAccount(store, 'disabled');
    await store.disableAccount(disabledAccount.accountId, 'test');
    const secret = secretOf(a.adminToken);
    const flipped = `${secret.slice(0, 20)}${secret[20] === 'A' ? 'B' : 'A'}${secret.slice(21)}`;
    const credentials: [string, string | undefined][] = [
      ['no Authorization', undefined],
      ['Basic scheme with the admin token', `Basic ${Buffer.from(`x:${a.adminToken}`).toString('base64')}`],
      ['a Bearer that is no token', 'Bearer garbage'],
      ['the admin id with one secret character changed', `Bearer ${a.adminToken.slice(0, a.adminToken.length - secret.length)}${flipped}`],
      ['an unknown id with the admin secret', `Bearer tuna_ak_${ABSENT_ID}_${secret}`],
      ['a tunnel key', `Bearer ${tunnel.token}`],
      ['a revoked admin key', `Bearer ${revoked.token}`],
      ['an admin key of a disabled account', `Bearer ${disabledAccount.adminToken}`],
    ];
    const seen = new Set<string>();
    let sent = 0;
    for (const [r, route] of routes.entries()) {
      for (const [c, [what, authorization]] of credentials.entries()) {
        // one loopback address per attempt: the failed-authentication limiter (20 per address) stays out of the way
        const options = { localAddress: `127.1.${r}.${c + 1}`, ...(authorization !== undefined ? { authorization } : {}) };
        const answer = await api(running.controlPort, route.method, concrete(route, ABSENT_ID), undefined, route.method === 'POST' ? {} : undefined, options);
        sent++;
        expect(answer.status, `${label(route)} with ${what}`).to.equal(401);
        seen.add(refusal(answer));
      }
    }
    // /metrics on the tunnel listener asks for an admin key too (it is mounted beside the table)
    const metrics = new Set<string>();
    for (const [c, [what, authorization]] of credentials.entries()) {
      const options = { localAddress: `127.2.0.${c + 1}`, ...(authorization !== undefined ? { authorization } : {}) };
      const answer = await api(running.controlPort, 'GET', '/metrics', undefined, undefined, options);
      expect(answer.status, `/metrics with ${what}`).to.equal(401);
      metrics.add(refusal(answer));
    }
    attack(`bad credentials: ${routes.length} routes × ${credentials.length} kinds = ${sent} requests → ${sent} × 401, ${seen.size} distinct answer; /metrics × ${credentials.length} → 401, ${metrics.size} distinct answer`);
    expect([...seen]).to.have.length(1);
    expect([...metrics]).to.have.length(1);
    expect(JSON.parse([...seen][0]!)).to.deep.include({ challenge: 'Bearer realm="tuna"' });
    expect(await store.listReservations(a.accountId)).to.have.length(1);
    expect(await store.listTunnelKeys(a.accountId)).to.have.length(1);
    expect(await store.listAccounts()).to.have.length(3);
  });

  it('applies the scope matrix to every route: a key without the route\'s scope gets 403, a key with it gets past authorisation', async () => {
    const routes = routeTable(store);
    // the table itself: what manages accounts, API keys and the audit log is the edge operator's alone
    for (const route of routes.filter((r) => /^\^\\\/v1\\\/(accounts|api-keys|audit)/.test(r.path.source))) expect(route.scope, label(route)).to.equal('admin');
    const keys = {
      reservations: a.reservationsToken,
      tunnels: (await store.createApiKey({ accountId: a.accountId, name: 'cli', scopes: ['tunnels'] }, 'test')).token,
      admin: a.adminToken,
    };
    const matrix: string[] = [];
    let forbidden = 0;
    for (const route of routes) {
      const row: string[] = [];
      for (const [scope, token] of Object.entries(keys)) {
        const answer = await api(running.controlPort, route.method, concrete(route, ABSENT_ID), token, route.method === 'POST' ? {} : undefined);
        const allowed = route.scope === 'any' || route.scope === scope || scope === 'admin';
        if (allowed) expect(answer.status, `${label(route)} with a ${scope} key`).not.to.be.oneOf([401, 403]);
        else {
          expect(answer.status, `${label(route)} with a ${scope} key`).to.equal(403);
          forbidden++;
        }
        row.push(`${scope[0]}:${answer.status}`);
      }
      matrix.push(`${route.method} ${concrete(route, ABSENT_ID).replaceAll(ABSENT_ID, '{id}')} (${route.scope}) ${row.join(' ')}`);
    }
    attack(`scope matrix: ${routes.length} routes × 3 scopes → ${forbidden} × 403 where the scope is missing, none where it is held`);
    for (const line of matrix) attack(`  ${line}`);
    expect(await store.listAccounts()).to.have.length(2);
  });

  it('answers tenant A on every route that takes tenant B\'s reservation or tunnel key id exactly as for an id that does not exist', async () => {
    const routes = routeTable(store).filter((r) => r.scope === 'reservations' && r.path.source.includes('([^/]+)'));
    const bTunnel = await reserveAndMint(running.controlPort, b.reservationsToken, { kind: 'tcp-port' }, { protocol: 'tcp' });
    const idOf = (route: ControlRoute): string => (route.path.source.includes('tunnel-keys') ? bTunnel.keyId : bTunnel.reservationId);
    const before = JSON.stringify([await store.listReservations(b.accountId), await store.listTunnelKeys(b.accountId)]);
    const bodies = [{}, { ports: [{ port: 21001, protocol: 'tcp' }] }, { graceSeconds: 60 }];
    let tried = 0;
    for (const route of routes) {
      for (const body of route.method === 'POST' || route.method === 'PUT' ? bodies : [undefined]) {
        const theirs = await api(running.controlPort, route.method, concrete(route, idOf(route)), a.reservationsToken, body);
        const absent = await api(running.controlPort, route.method, concrete(route, ABSENT_ID), a.reservationsToken, body);
        tried++;
        expect(theirs.status, label(route)).to.be.oneOf([400, 404]);
        expect({ status: theirs.status, code: (theirs.body['error'] as { code?: string })?.code }, label(route)).to.deep.equal({
          status: absent.status,
          code: (absent.body['error'] as { code?: string })?.code,
        });
      }
    }
    // and through the body: a tunnel key minted on B's reservation
    const mint = await api(running.controlPort, 'POST', '/v1/tunnel-keys', a.reservationsToken, { reservationId: bTunnel.reservationId, protocol: 'tcp' });
    const mintAbsent = await api(running.controlPort, 'POST', '/v1/tunnel-keys', a.reservationsToken, { reservationId: ABSENT_ID, protocol: 'tcp' });
    expect(mint.status).to.equal(mintAbsent.status).and.to.equal(404);
    const listed = await api(running.controlPort, 'GET', '/v1/reservations', a.reservationsToken);
    expect(JSON.stringify(listed.body)).not.to.include(bTunnel.reservationId);
    attack(`cross-tenant ids: ${routes.length} routes, ${tried + 1} requests with tenant B's ids under tenant A's key → the answers for an absent id (404/400), B's records unchanged`);
    expect(JSON.stringify([await store.listReservations(b.accountId), await store.listTunnelKeys(b.accountId)])).to.equal(before);
  });
});

describe('attack: reservations outside the pools or on the edge\'s own ports', function () {
  this.timeout(60_000);
  let store: Store;
  let server: HttpServer | undefined;
  let running: StoreEdge | undefined;

  beforeEach(async () => {
    store = await openSqliteStore(':memory:');
  });
  afterEach(async () => {
    if (running) await running.edge.close();
    running = undefined;
    if (server) {
      server.closeAllConnections();
      await new Promise((resolve) => server!.close(resolve));
    }
    server = undefined;
    await store.close();
  });

  const REFUSED: [string, Record<string, unknown>, string, RegExp][] = [
    ['the edge\'s own port inside the pool', { kind: 'tcp-port', port: 30004 }, 'port', /own listeners/],
    ['port 1', { kind: 'tcp-port', port: 1 }, 'port', /outside the TCP port pool 30000-30009/],
    ['port 18080', { kind: 'tcp-port', port: 18080 }, 'port', /outside the TCP port pool 30000-30009/],
    ['port 28080', { kind: 'tcp-port', port: 28080 }, 'port', /outside the TCP port pool 30000-30009/],
    ['port 30010', { kind: 'tcp-port', port: 30010 }, 'port', /outside the TCP port pool 30000-30009/],
    ['0.0.0.0', { kind: 'address', address: '0.0.0.0' }, 'address', /outside the address pool 127\.77\.0\.0\/29/],
    ['::', { kind: 'address', address: '::' }, 'address', /outside the address pool 127\.77\.0\.0\/29/],
    ['127.0.0.1', { kind: 'address', address: '127.0.0.1' }, 'address', /outside the address pool 127\.77\.0\.0\/29/],
    ['255.255.255.255', { kind: 'address', address: '255.255.255.255' }, 'address', /outside the address pool 127\.77\.0\.0\/29/],
    ['the pool\'s broadcast address', { kind: 'address', address: '127.77.0.7' }, 'address', /outside the address pool/],
  ];

  it('refuses, with a 400 naming the field and the pool, ports and addresses outside the pools or on its own listeners', async () => {
    const seeded = await seedAccount(store);
    const control = createControlApi({
      store,
      baseDomain: 'edge.test',
      portPool: { first: 30000, last: 30009 },
      addressPool: '127.77.0.0/29',
      ownPorts: () => [30004],
      verifyDomain: async () => false,
    });
    server = createHttpServer(control).listen(0, '127.0.0.1');
    await once(server, 'listening');
    const port = (server.address() as AddressInfo).port;
    for (const [what, body, field, message] of REFUSED) {
      const res = await api(port, 'POST', '/v1/reservations', seeded.reservationsToken, body);
      expect(res.status, what).to.equal(400);
      const error = res.body['error'] as { field?: string; message: string };
      expect(error.field, what).to.equal(field);
      expect(error.message, what).to.match(message);
    }
    const inside = await api(port, 'POST', '/v1/reservations', seeded.reservationsToken, { kind: 'address', address: '127.77.0.6' });
    expect(inside.status).to.equal(201);
    expect(await store.listReservations(seeded.accountId)).to.have.length(1);
    attack(`out-of-pool reservations: ${REFUSED.length} ports and addresses (own port 30004, 1, 18080, 28080, 30010, 0.0.0.0, ::, 127.0.0.1, 255.255.255.255, 127.77.0.7) → ${REFUSED.length} × 400 naming the field; 127.77.0.6 inside → 201`);
  });

  it('refuses the bound ports of a started edge\'s own tunnel and HTTP listeners even when the pool holds them', async () => {
    running = await startStoreEdge(store, storeEdgeConfig('unused', { portPool: { first: 1024, last: 65535 } }));
    const seeded = await seedAccount(store);
    for (const own of [running.controlPort, running.httpPort]) {
      const res = await api(running.controlPort, 'POST', '/v1/reservations', seeded.reservationsToken, { kind: 'tcp-port', port: own });
      expect(res.status, String(own)).to.equal(400);
      expect(res.body['error']).to.include({ field: 'port' });
    }
    expect(await store.listReservations(seeded.accountId)).to.have.length(0);
    attack(`own ports: the tunnel/control port ${running.controlPort} and the HTTP port ${running.httpPort} inside a pool of 1024-65535 → 2 × 400`);
  });
});
