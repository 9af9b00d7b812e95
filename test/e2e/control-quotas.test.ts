import { expect } from 'chai';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ControlQuotaExceededError, errorFromAnswer } from '../../src/control-api/index.js';
import { UnverifiedDomainExpiry, createControlApi } from '../../src/edge/control/index.js';
import { EdgeConfigError, decodeEdgeConfig } from '../../src/edge/index.js';
import { openSqliteStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';
import { api, seedAccount, startStoreEdge, storeEdgeConfig } from '../support/edge-store-harness.js';
import type { Seeded } from '../support/edge-store-harness.js';
import { FakeClock } from '../support/postgres.js';

const DAY = 86_400_000;

/** Through the control API: account quotas, admin overrides, expiring unverified domains. */
describe('control API: account quotas and unverified custom domains', function () {
  this.timeout(30_000);
  let store: Store;
  let clock: FakeClock;
  let server: Server;
  let port: number;
  let seeded: Seeded;

  beforeEach(async () => {
    clock = new FakeClock();
    store = await openSqliteStore(':memory:', clock);
    seeded = await seedAccount(store);
    const control = createControlApi({
      store,
      clock,
      baseDomain: 'tuna.test',
      portPool: { first: 30000, last: 30009 },
      quotas: { reservations: 2, tunnelKeys: 1 },
      verifyDomain: async () => false,
    });
    server = createServer(control).listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
  });
  afterEach(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await store.close();
  });

  const reserve = (token = seeded.reservationsToken, body: Record<string, unknown> = { kind: 'tcp-port' }) => api(port, 'POST', '/v1/reservations', token, body);

  it('refuses the reservation past the configured quota with 409 TUNA_CONTROL_QUOTA_EXCEEDED naming the quota', async () => {
    expect((await reserve()).status).to.equal(201);
    expect((await reserve()).status).to.equal(201);
    const third = await reserve();
    expect(third.status).to.equal(409);
    expect(third.body['error']).to.deep.include({ code: 'TUNA_CONTROL_QUOTA_EXCEEDED', field: 'reservations' });
    expect((third.body['error'] as { message: string }).message).to.match(/quota reservations exceeded/);
    const decoded = errorFromAnswer(409, third.body['error'] as { code: string; message: string; field: string });
    expect(decoded).to.be.instanceOf(ControlQuotaExceededError).and.include({ field: 'reservations' });
  });

  it('refuses the tunnel key past the quota, naming tunnelKeys', async () => {
    const reservationId = ((await reserve()).body['reservation'] as { id: string }).id;
    const mint = () => api(port, 'POST', '/v1/tunnel-keys', seeded.reservationsToken, { reservationId, protocol: 'tcp' });
    expect((await mint()).status).to.equal(201);
    const second = await mint();
    expect(second.status).to.equal(409);
    expect(second.body['error']).to.deep.include({ code: 'TUNA_CONTROL_QUOTA_EXCEEDED', field: 'tunnelKeys' });
  });

  it('lets an admin override one account\'s quota (and only an admin), and reset it to the default', async () => {
    const path = `/v1/accounts/${seeded.accountId}/quotas`;
    expect((await api(port, 'GET', path, seeded.adminToken)).body['quotas']).to.deep.equal({
      accountId: seeded.accountId,
      overrides: { reservations: null, tunnelKeys: null, concurrentTunnels: null },
      limits: { reservations: 2, tunnelKeys: 1, concurrentTunnels: 200 },
    });
    expect((await api(port, 'POST', path, seeded.reservationsToken, { reservations: 50 })).status).to.equal(403);
    expect((await api(port, 'POST', path, seeded.adminToken, { reservation: 3 })).status).to.equal(400);
    expect((await api(port, 'POST', path, seeded.adminToken, { reservations: -1 })).status).to.equal(400);
    expect((await api(port, 'POST', '/v1/accounts/0000000000000000/quotas', seeded.adminToken, { reservations: 3 })).status).to.equal(404);
    const set = await api(port, 'POST', path, seeded.adminToken, { reservations: 3 });
    expect(set.status).to.equal(200);
    expect(set.body['quotas']).to.deep.include({ limits: { reservations: 3, tunnelKeys: 1, concurrentTunnels: 200 } });
    for (let i = 0; i < 3; i++) expect((await reserve()).status).to.equal(201);
    expect((await reserve()).status).to.equal(409);
    expect((await api(port, 'POST', path, seeded.adminToken, { reservations: 4, reset: ['reservations'] })).status).to.equal(400);
    const reset = await api(port, 'POST', path, seeded.adminToken, { reset: ['reservations'] });
    expect(reset.body['quotas']).to.deep.include({ overrides: { reservations: null, tunnelKeys: null, concurrentTunnels: null } });
  });

  it('releases a custom domain left unverified past the configured days, so its real owner can reserve it', async () => {
    const squatter = seeded;
    const owner = await seedAccount(store, 'owner');
    const hostname = 'shop.example.org';
    expect((await reserve(squatter.reservationsToken, { kind: 'domain', hostname })).status).to.equal(201);
    expect((await reserve(owner.reservationsToken, { kind: 'domain', hostname })).status).to.equal(409);
    const expiry = new UnverifiedDomainExpiry({ store, clock, days: 7 });
    clock.advance(6 * DAY);
    expect(await expiry.sweep()).to.equal(0);
    clock.advance(2 * DAY);
    expect(await expiry.sweep()).to.equal(1);
    expect((await reserve(owner.reservationsToken, { kind: 'domain', hostname })).status).to.equal(201);
    const audit = await store.listAuditEvents({ accountId: squatter.accountId });
    expect(audit.some((e) => e.action === 'reservation.release' && e.actor === 'system')).to.equal(true);
  });

  it('refuses quotas and expiry that are not whole numbers in the edge config, naming the field', () => {
    const config = (store: Record<string, unknown>) => ({ listen: { tunnel: { port: 0 } }, store: { url: ':memory:', baseDomain: 'tuna.test', ...store } });
    expect(() => decodeEdgeConfig(config({ quotas: { reservations: -1 } }))).to.throw(EdgeConfigError, /store\.quotas\.reservations/);
    expect(() => decodeEdgeConfig(config({ quotas: { tunnelKeys: 1.5 } }))).to.throw(EdgeConfigError, /store\.quotas\.tunnelKeys/);
    expect(() => decodeEdgeConfig(config({ quotas: { concurrentTunnels: -2 } }))).to.throw(EdgeConfigError, /store\.quotas\.concurrentTunnels/);
    expect(() => decodeEdgeConfig(config({ unverifiedDomainDays: 0 }))).to.throw(EdgeConfigError, /store\.unverifiedDomainDays/);
    expect(decodeEdgeConfig(config({ quotas: { reservations: 10, tunnelKeys: 20 }, unverifiedDomainDays: 3 })).store?.quotas).to.deep.equal({ reservations: 10, tunnelKeys: 20 });
  });

  it('takes store.quotas and store.unverifiedDomainDays from the edge config, sweeping at start', async () => {
    const old = await openSqliteStore(':memory:', new FakeClock(Date.now() - 10 * DAY));
    try {
      const tenant = await seedAccount(old, 'tenant');
      await old.createReservation({ accountId: tenant.accountId, spec: { kind: 'domain', hostname: 'old.example.org', domainType: 'custom' } }, 'test');
      const running = await startStoreEdge(old, storeEdgeConfig('unused', { quotas: { reservations: 1 }, unverifiedDomainDays: 7 }));
      try {
        expect(await old.listReservations(tenant.accountId), 'released at start').to.deep.equal([]);
        expect((await api(running.controlPort, 'POST', '/v1/reservations', tenant.reservationsToken, { kind: 'tcp-port' })).status).to.equal(201);
        const refused = await api(running.controlPort, 'POST', '/v1/reservations', tenant.reservationsToken, { kind: 'tcp-port' });
        expect(refused.status).to.equal(409);
        expect(refused.body['error']).to.deep.include({ code: 'TUNA_CONTROL_QUOTA_EXCEEDED', field: 'reservations' });
      } finally {
        await running.edge.close();
      }
    } finally {
      await old.close();
    }
  });
});
