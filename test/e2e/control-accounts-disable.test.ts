import { expect } from 'chai';
import { ControlClient, ControlInvalidRequestError, ControlNotFoundError, ControlUnauthorizedError } from '../../src/control-api/index.js';
import { openSqliteStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';
import type { TunnelSession } from '../../src/tunnel/session.js';
import { connectAgent, refusalStatus, seedAccount, startStoreEdge } from '../support/edge-store-harness.js';
import type { StoreEdge } from '../support/edge-store-harness.js';

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (e: unknown) => e,
  );
}

/**
 * POST /v1/accounts/{id}/disable through a store-mode edge on 127.0.0.1: an admin switches a tenant
 * off and every key of the tenant stops working, on the control API and at the tunnel endpoint.
 */
describe('control API: creating, listing and disabling accounts', function () {
  this.timeout(30_000);
  let store: Store;
  let running: StoreEdge;
  let admin: ControlClient;
  let adminAccountId: string;
  const sessions: TunnelSession[] = [];

  beforeEach(async () => {
    store = await openSqliteStore(':memory:');
    running = await startStoreEdge(store);
    const seeded = await seedAccount(store, 'edge-admins');
    adminAccountId = seeded.accountId;
    admin = new ControlClient({ url: new URL(`http://127.0.0.1:${running.controlPort}`) }, seeded.adminToken);
  });
  afterEach(async () => {
    for (const s of sessions.splice(0)) s.destroy();
    await running.edge.close();
    await store.close();
  });

  function as(token: string): ControlClient {
    return new ControlClient({ url: new URL(`http://127.0.0.1:${running.controlPort}`) }, token);
  }

  it('creates and lists accounts, then a disabled account\'s API keys get 401 and its tunnel key is refused and its live tunnel closed', async () => {
    const { account } = await admin.createAccount('tenant-a');
    expect(account).to.include({ name: 'tenant-a', disabledAt: null });
    const ops = await admin.createApiKey({ name: 'operator', scopes: ['reservations'], accountId: account.id });
    const cli = await admin.createApiKey({ name: 'laptop', scopes: ['tunnels'], accountId: account.id });
    const tenant = as(ops.token);
    const { reservation } = await tenant.reserve({ kind: 'tcp-port', name: 'default/ssh' });
    const minted = await tenant.mintTunnelKey({ reservationId: reservation.id, protocol: 'tcp', maxConnections: 2 });
    const bindingId = `binding/tcp-port/${reservation.value}`;
    const live = await connectAgent(running.endpoint, bindingId, minted.token);
    sessions.push(live);

    const disabled = await admin.disableAccount(account.id);
    expect(disabled.account.disabledAt).to.be.a('number');
    expect([...disabled.revokedApiKeyIds].sort()).to.deep.equal([ops.apiKey.id, cli.apiKey.id].sort());
    expect(disabled.revokedTunnelKeyIds).to.deep.equal([minted.tunnelKey.id]);
    await live.closed();

    expect(await failure(tenant.listReservations())).to.be.instanceOf(ControlUnauthorizedError);
    expect(await failure(as(cli.token).describeEdge())).to.be.instanceOf(ControlUnauthorizedError);
    expect(await refusalStatus(running.endpoint, bindingId, minted.token)).to.equal(403);
    expect(await refusalStatus(running.endpoint, bindingId, cli.token)).to.equal(403);
    // The reservation stays held: nobody else takes the port while the tenant is off.
    expect((await store.findReservation('tcp-port', reservation.value))?.accountId).to.equal(account.id);

    const { accounts } = await admin.listAccounts();
    expect(accounts.map((a) => [a.name, a.disabledAt === null])).to.deep.equal([['edge-admins', true], ['tenant-a', false]]);
  });

  it('refuses to disable the calling key\'s own account (400, field id) and an unknown account (404)', async () => {
    const own = await failure(admin.disableAccount(adminAccountId));
    expect(own).to.be.instanceOf(ControlInvalidRequestError);
    expect(own).to.include({ field: 'id' });
    expect(await failure(admin.disableAccount('0123456789abcdef'))).to.be.instanceOf(ControlNotFoundError);
    expect((await admin.listAccounts()).accounts.every((a) => a.disabledAt === null)).to.equal(true);
  });

  it('answers 403 to a disable by a key without the admin scope', async () => {
    const { account } = await admin.createAccount('tenant-b');
    const ops = await admin.createApiKey({ name: 'operator', scopes: ['reservations'], accountId: account.id });
    const err = await failure(as(ops.token).disableAccount(adminAccountId));
    expect(err).to.include({ status: 403, requiredScope: 'admin' });
  });
});
