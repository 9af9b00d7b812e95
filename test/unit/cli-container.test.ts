import { expect } from 'chai';
import 'reflect-metadata';
import type { Socket } from 'node:net';
import { container as rootContainer } from 'tsyringe';
import { AgentFactory, EDGE_STARTER, TUNNEL_CONTROL_FACTORY, createContainer, createRuntime, registerCli } from '../../src/cli/container.js';
import type { AgentOptions } from '../../src/cli/agent-options.js';
import { StaticEndpointResolver } from '../../src/dataplane/index.js';
import { emptyGraph } from '../../src/model/index.js';
import type { RouteGraph } from '../../src/model/index.js';
import { CLOCK, EDGE_DIALER, SystemClock, TunnelManager } from '../../src/tunnel/index.js';
import type { EdgeDialer, EdgeEndpoint } from '../../src/tunnel/index.js';

/** DialerDouble records each dial and fails it (nothing is dialed). */
class DialerDouble implements EdgeDialer {
  readonly dialed: EdgeEndpoint[] = [];
  dial(edge: EdgeEndpoint): Promise<Socket> {
    this.dialed.push(edge);
    return Promise.reject(new Error('a double: no edge here'));
  }
}

// The `tuna` process's root resolves from its container with test doubles for the seams (src/cli/container.ts).
describe('cli container: the graph of the tuna process', () => {
  const options: AgentOptions = { edge: { host: '127.0.0.1', port: 1, tls: false }, key: 'tuna_test_key', connections: 1 };
  const graph: RouteGraph = {
    ...emptyGraph(),
    bindings: [{ id: 'binding/host/app.tuna.test', kind: 'host', hostnames: ['app.tuna.test'], source: { kind: 'Test', name: 'app' } }],
  } as RouteGraph;

  it('builds an agent whose tunnels dial through the EDGE_DIALER double registered on a child container', async () => {
    const scope = createContainer().createChildContainer();
    const dialer = new DialerDouble();
    scope.register(EDGE_DIALER, { useValue: dialer });
    const agent = scope.resolve(AgentFactory).create(options, new StaticEndpointResolver());
    try {
      await agent.apply(graph).catch(() => undefined);
      expect(dialer.dialed.length).to.be.greaterThan(0);
      expect(dialer.dialed[0]).to.include({ host: '127.0.0.1', port: 1 });
    } finally {
      await agent.close();
    }
  });

  it('registers every part the root needs: the agent factory, the edge starter and a tunnel manager resolve from registerCli alone', () => {
    const c = rootContainer.createChildContainer();
    registerCli(c);
    expect(c.resolve(AgentFactory)).to.be.instanceOf(AgentFactory);
    expect(c.resolve(EDGE_STARTER)).to.be.a('function');
    expect(c.resolve(CLOCK)).to.be.instanceOf(SystemClock);
    const manager = createRuntime(c).createTunnelManager({ handleStream: () => undefined } as never, { resolveKey: () => Promise.resolve('k') });
    expect(manager).to.be.instanceOf(TunnelManager);
  });

  it('fails to resolve when a registration is missing', () => {
    expect(() => rootContainer.createChildContainer().resolve(AgentFactory)).to.throw(/tuna\.cli\.TunnelControlFactory/);
    const noDialer = rootContainer.createChildContainer();
    noDialer.register(TUNNEL_CONTROL_FACTORY, { useValue: () => ({ apply: () => Promise.resolve(), close: () => Promise.resolve() }) });
    noDialer.register(EDGE_STARTER, { useValue: () => Promise.reject(new Error('a double')) });
    expect(() => createRuntime(noDialer).createTunnelManager({} as never, {} as never)).to.throw(/tuna\.tunnel\.EdgeDialer/);
  });
});
