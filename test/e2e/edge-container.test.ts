import { expect } from 'chai';
import 'reflect-metadata';
import { container as rootContainer } from 'tsyringe';
import { EDGE_OPTIONS, STORE, STORE_OPENER, edgeScope, initEdge, startEdgeIn } from '../../src/edge/index.js';
import type { EdgeConfigFile, StoreOpener } from '../../src/edge/index.js';
import { openSqliteStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';
import { EDGE_STARTER, createContainer } from '../../src/cli/container.js';
import { api, storeEdgeConfig } from '../support/edge-store-harness.js';

// The edge's composition root (src/edge/container.ts): a test swaps one part by registering it.
describe('edge composition root (tsyringe)', () => {
  const config: EdgeConfigFile = storeEdgeConfig('sqlite::memory:');

  it('opens the configured store with the registered STORE_OPENER, serves the control API from it, and closes it with the edge', async () => {
    const opened: { url: string; store: Store }[] = [];
    const opener: StoreOpener = async (settings) => {
      const store = await openSqliteStore(':memory:');
      opened.push({ url: settings.url, store });
      return store;
    };
    const scope = edgeScope(rootContainer.createChildContainer(), config);
    scope.register(STORE_OPENER, { useValue: opener });
    const edge = await startEdgeIn(scope);
    try {
      expect(opened.map((o) => o.url)).to.deep.equal(['sqlite::memory:']);
      const { adminKey } = await initEdge(opened[0]!.store);
      const me = await api(edge.address().tunnel.port, 'GET', '/v1/account', adminKey.token);
      expect(me.status).to.equal(200);
    } finally {
      await edge.close();
    }
    // The edge owned the store it opened: closed with it.
    let closedError: unknown;
    try {
      await opened[0]!.store.listAccounts();
    } catch (err) {
      closedError = err;
    }
    expect(closedError, 'the opened store is closed with the edge').to.be.instanceOf(Error);
  });

  it('uses a registered STORE instead of opening one, and leaves it open (the caller owns it)', async () => {
    const store = await openSqliteStore(':memory:');
    const scope = edgeScope(rootContainer.createChildContainer(), config);
    scope.register(STORE, { useValue: store });
    scope.register(STORE_OPENER, { useValue: () => Promise.reject(new Error('must not open a store')) });
    scope.register(EDGE_OPTIONS, { useValue: { drainTimeoutMs: 100 } });
    const edge = await startEdgeIn(scope);
    try {
      const { adminKey } = await initEdge(store);
      expect((await api(edge.address().tunnel.port, 'GET', '/v1/account', adminKey.token)).status).to.equal(200);
    } finally {
      await edge.close();
    }
    expect(await store.listAccounts()).to.have.length(1);
    await store.close();
  });

  it('is how the CLI container starts edges: a STORE_OPENER registered on it replaces the production one', async () => {
    const c = createContainer();
    const asked: string[] = [];
    c.register(STORE_OPENER, {
      useValue: async (settings) => {
        asked.push(settings.url);
        return openSqliteStore(':memory:');
      },
    });
    const running = await c.resolve(EDGE_STARTER)(config, () => undefined);
    await running.close();
    expect(asked).to.deep.equal(['sqlite::memory:']);
  });
});
