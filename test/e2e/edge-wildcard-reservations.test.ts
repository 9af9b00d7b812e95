import { expect } from 'chai';
import { openSqliteStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';
import type { TunnelSession } from '../../src/tunnel/session.js';
import { http1 } from '../support/tunnel-harness.js';
import { BASE_DOMAIN, api, connectAgent, reserveAndMint, seedAccount, startStoreEdge } from '../support/edge-store-harness.js';
import type { Seeded, StoreEdge } from '../support/edge-store-harness.js';

/**
 * A store-mode edge could not reserve a wildcard host. `*.name.<base domain>`
 * and `*.<verified custom domain>` are reservable by the account holding the name under them,
 * and served at the edge by wildcard lookup (one or more labels).
 */
describe('store-mode wildcard reservations', () => {
  let store: Store;
  let running: StoreEdge;
  let a: Seeded;
  let b: Seeded;
  const sessions: TunnelSession[] = [];

  beforeEach(async () => {
    store = await openSqliteStore(':memory:');
    running = await startStoreEdge(store);
    a = await seedAccount(store, 'a');
    b = await seedAccount(store, 'b');
  });
  afterEach(async () => {
    for (const s of sessions.splice(0)) s.destroy();
    await running.edge.close();
    await store.close();
  });

  const reserve = (token: string, hostname: string) => api(running.controlPort, 'POST', '/v1/reservations', token, { kind: 'domain', hostname });

  it('reserves *.shop.<base> for the holder of shop.<base> and serves every name under it through its tunnel', async () => {
    expect((await reserve(a.reservationsToken, `shop.${BASE_DOMAIN}`)).status).to.equal(201);
    const wild = await reserveAndMint(running.controlPort, a.reservationsToken, { kind: 'domain', hostname: `*.shop.${BASE_DOMAIN}` }, { protocol: 'http' });
    expect(wild.bindingId).to.equal(`binding/host/*.shop.${BASE_DOMAIN}`);
    sessions.push(await connectAgent(running.endpoint, wild.bindingId, wild.token));
    for (const host of [`a.shop.${BASE_DOMAIN}`, `x.y.shop.${BASE_DOMAIN}`, `A.Shop.${BASE_DOMAIN.toUpperCase()}.`]) {
      expect((await http1(running.httpPort, host, '/')).status, host).to.equal(200);
    }
    expect((await http1(running.httpPort, `a.other.${BASE_DOMAIN}`, '/')).status).to.equal(404);
  });

  it('refuses a wildcard under a name the account does not hold, and *.<base> itself (400 naming hostname)', async () => {
    expect((await reserve(a.reservationsToken, `shop.${BASE_DOMAIN}`)).status).to.equal(201);
    const theirs = await reserve(b.reservationsToken, `*.shop.${BASE_DOMAIN}`);
    expect(theirs.status).to.equal(400);
    expect(JSON.stringify(theirs.body)).to.contain(`needs shop.${BASE_DOMAIN} reserved by the same account`);
    const unheld = await reserve(a.reservationsToken, `*.nobody.${BASE_DOMAIN}`);
    expect(unheld.status).to.equal(400);
    expect(JSON.stringify(unheld.body)).to.contain('hostname');
    const everyone = await reserve(a.reservationsToken, `*.${BASE_DOMAIN}`);
    expect(everyone.status).to.equal(400);
    expect(JSON.stringify(everyone.body)).to.contain('every tenant');
  });

  it('reserves *.example.org only once example.org is verified by the same account, and serves it', async () => {
    const custom = await reserve(a.reservationsToken, 'example.org');
    expect(custom.status).to.equal(201);
    const early = await reserve(a.reservationsToken, '*.example.org');
    expect(early.status).to.equal(400);
    expect(JSON.stringify(early.body)).to.contain('needs example.org verified first');
    await store.markDomainVerified(a.accountId, (custom.body['reservation'] as { id: string }).id, 'test');
    const wild = await reserveAndMint(running.controlPort, a.reservationsToken, { kind: 'domain', hostname: '*.example.org' }, { protocol: 'http' });
    const record = (await api(running.controlPort, 'GET', `/v1/reservations/${wild.reservationId}`, a.reservationsToken)).body['reservation'] as { verified: boolean };
    expect(record.verified).to.equal(true);
    sessions.push(await connectAgent(running.endpoint, wild.bindingId, wild.token));
    expect((await http1(running.httpPort, 'www.example.org', '/')).status).to.equal(200);
  });

  it('releases the wildcard with the domain it stands under, and closes its tunnel', async () => {
    const parent = await reserve(a.reservationsToken, `shop.${BASE_DOMAIN}`);
    const wild = await reserveAndMint(running.controlPort, a.reservationsToken, { kind: 'domain', hostname: `*.shop.${BASE_DOMAIN}` }, { protocol: 'http' });
    const session = await connectAgent(running.endpoint, wild.bindingId, wild.token);
    sessions.push(session);
    const released = await api(running.controlPort, 'DELETE', `/v1/reservations/${(parent.body['reservation'] as { id: string }).id}`, a.reservationsToken);
    expect(released.status).to.equal(200);
    expect(released.body['revokedTunnelKeyIds']).to.deep.equal([wild.keyId]);
    await session.closed();
    expect((await api(running.controlPort, 'GET', `/v1/reservations/${wild.reservationId}`, a.reservationsToken)).status).to.equal(404);
    expect((await reserve(b.reservationsToken, `shop.${BASE_DOMAIN}`)).status).to.equal(201);
  });
});
