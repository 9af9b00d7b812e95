import { expect } from 'chai';
import { EdgeAlreadyInitializedError, initEdge } from '../../src/edge/index.js';
import { openSqliteStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';
import { api, secretOf, startStoreEdge } from '../support/edge-store-harness.js';
import type { StoreEdge } from '../support/edge-store-harness.js';

describe('edge store mode: first start (initEdge)', () => {
  let store: Store;
  let running: StoreEdge;

  beforeEach(async () => {
    store = await openSqliteStore(':memory:');
    running = await startStoreEdge(store);
  });

  afterEach(async () => {
    await running.edge.close();
    await store.close();
  });

  it('creates the first account with an admin key that works on the control API, and stores no token', async () => {
    const { account, adminKey } = await initEdge(store);
    expect(adminKey.record.scopes).to.deep.equal(['admin']);
    const created = await api(running.controlPort, 'POST', '/v1/accounts', adminKey.token, { name: 'team-a' });
    expect(created.status).to.equal(201);
    const me = await api(running.controlPort, 'GET', '/v1/account', adminKey.token);
    expect(me.body).to.have.nested.property('account.id', account.id);
    const audit = JSON.stringify(await store.listAuditEvents());
    expect(audit).not.to.include(secretOf(adminKey.token));
  });

  it('refuses to run on a store that already has accounts', async () => {
    await initEdge(store);
    let caught: unknown;
    try {
      await initEdge(store);
    } catch (err) {
      caught = err;
    }
    expect(caught).to.be.instanceOf(EdgeAlreadyInitializedError);
    expect((caught as EdgeAlreadyInitializedError).code).to.equal('TUNA_EDGE_ALREADY_INITIALIZED');
    expect(await store.listAccounts()).to.have.length(1);
  });
});
