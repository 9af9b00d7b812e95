import { expect } from 'chai';
import 'reflect-metadata';
import { container as rootContainer } from 'tsyringe';
import { EDGE_CONFIG, EDGE_LOG, EDGE_OPTIONS, EdgeLauncher, STORE_OPENER, edgeScope, registerEdge } from '../../src/edge/index.js';
import type { EdgeConfigFile, StoreOpener } from '../../src/edge/index.js';
import { STORE } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';

// The edge's root resolves from its container with test doubles for the seams (src/edge/container.ts).
describe('edge container: the graph of one edge', () => {
  const config = { domain: 'tuna.test' } as unknown as EdgeConfigFile;
  const opener: StoreOpener = () => Promise.reject(new Error('a double: never opened here'));

  it('resolves EdgeLauncher with what registerEdge and edgeScope registered, and the doubles a test put in their place', () => {
    const lines: string[] = [];
    const scope = edgeScope(rootContainer.createChildContainer(), config, (line) => lines.push(line));
    scope.register(STORE_OPENER, { useValue: opener });
    const store = {} as Store;
    scope.register(STORE, { useValue: store });
    scope.register(EDGE_OPTIONS, { useValue: { drainTimeoutMs: 5 } });
    registerEdge(scope);
    const launcher = scope.resolve(EdgeLauncher);
    expect(launcher.config).to.equal(config);
    expect(launcher.openStore, 'the double, not the production opener').to.equal(opener);
    expect(launcher.store).to.equal(store);
    expect(launcher.options).to.deep.equal({ drainTimeoutMs: 5 });
    launcher.log('a line');
    expect(lines).to.deep.equal(['a line']);
  });

  it('fills the production parts in with registerEdge: a config alone resolves (no store, no options)', () => {
    const scope = rootContainer.createChildContainer();
    scope.register(EDGE_CONFIG, { useValue: config });
    registerEdge(scope);
    const launcher = scope.resolve(EdgeLauncher);
    expect(launcher.openStore).to.be.a('function');
    expect(launcher.store).to.equal(undefined);
    expect(launcher.options).to.equal(undefined);
    expect(scope.isRegistered(EDGE_LOG, true)).to.equal(true);
  });

  it('fails to resolve when a part is missing: no config, or no store opener without registerEdge', () => {
    const noConfig = rootContainer.createChildContainer();
    registerEdge(noConfig);
    expect(() => noConfig.resolve(EdgeLauncher)).to.throw(/tuna\.edge\.Config/);
    const noOpener = edgeScope(rootContainer.createChildContainer(), config);
    expect(() => noOpener.resolve(EdgeLauncher)).to.throw(/tuna\.edge\.StoreOpener/);
  });
});
