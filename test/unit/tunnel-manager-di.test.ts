import 'reflect-metadata';
import { expect } from 'chai';
import { container } from 'tsyringe';
import { SystemClock } from '../../src/tunnel/clock.js';
import { NetEdgeDialer } from '../../src/tunnel/dialer.js';
import { StaticKeySource } from '../../src/tunnel/key-source.js';
import { TunnelManager } from '../../src/tunnel/manager.js';
import { CLOCK, EDGE_DIALER, TUNNEL_KEY_SOURCE, TUNNEL_MANAGER_OPTIONS, TUNNEL_STREAM_HANDLER } from '../../src/tunnel/tokens.js';

describe('tunnel manager injection', () => {
  it('resolves from a tsyringe container through its explicit tokens', () => {
    const child = container.createChildContainer();
    const clock = new SystemClock();
    child.register(EDGE_DIALER, { useValue: new NetEdgeDialer() });
    child.register(CLOCK, { useValue: clock });
    child.register(TUNNEL_STREAM_HANDLER, { useValue: { handleStream: () => {} } });
    child.register(TUNNEL_KEY_SOURCE, { useValue: new StaticKeySource(new Map()) });
    child.register(TUNNEL_MANAGER_OPTIONS, { useValue: {} });
    const manager = child.resolve(TunnelManager);
    expect(manager).to.be.instanceOf(TunnelManager);
    expect(manager.status()).to.deep.equal([]);
    manager.destroy();
  });
});
