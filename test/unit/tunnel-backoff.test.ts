import { expect } from 'chai';
import type { Socket } from 'node:net';
import { DEFAULT_BACKOFF, backoffDelay, healthyReconnectDelay } from '../../src/tunnel/backoff.js';
import type { EdgeDialer, EdgeEndpoint } from '../../src/tunnel/dialer.js';
import { EdgeUnreachableError } from '../../src/tunnel/errors.js';
import type { TunnelError } from '../../src/tunnel/errors.js';
import { StaticKeySource } from '../../src/tunnel/key-source.js';
import { TunnelManager } from '../../src/tunnel/manager.js';
import type { TunnelStreamHandler } from '../../src/wire/stream-handler.js';
import { FakeClock } from '../support/tunnel-fake-clock.js';

const EDGE: EdgeEndpoint = { host: '127.0.0.1', port: 1, tls: false };

/** a dialer that always fails, counting attempts */
class RefusingDialer implements EdgeDialer {
  attempts = 0;
  dial(edge: EdgeEndpoint): Promise<Socket> {
    this.attempts++;
    return Promise.reject(new EdgeUnreachableError(`${edge.host}:${edge.port}`, new Error('connection refused')));
  }
}

const handler: TunnelStreamHandler = { handleStream: () => {} };
const settle = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('tunnel backoff', () => {
  it('doubles from 1 s to a 30 s cap, with at least half of each step kept', () => {
    const top = { ...DEFAULT_BACKOFF, random: () => 0.999999 };
    const bottom = { ...DEFAULT_BACKOFF, random: () => 0 };
    expect([0, 1, 2, 3, 4, 5, 6, 40].map((n) => backoffDelay(n, top))).to.deep.equal([1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
    expect([0, 1, 5].map((n) => backoffDelay(n, bottom))).to.deep.equal([500, 1000, 15000]);
  });

  it('redials within afterHealthyMs after a connection that had been open', () => {
    expect(healthyReconnectDelay({ ...DEFAULT_BACKOFF, random: () => 0.5 })).to.equal(125);
  });

  it('schedules failed dials on the backoff sequence through the injected clock', async () => {
    const clock = new FakeClock();
    const dialer = new RefusingDialer();
    const manager = new TunnelManager(dialer, clock, handler, new StaticKeySource(new Map([['k', 'key']])), {
      backoff: { random: () => 0.999999 },
    });
    const errors: string[] = [];
    manager.on('tunnel-error', (_id: string, err: Error) => errors.push((err as TunnelError).code));
    manager.apply([{ bindingId: 'b', edges: [EDGE], keyRef: 'k' }]);
    const delays: number[] = [];
    for (let i = 0; i < 7; i++) {
      await settle();
      delays.push(clock.fireNext());
    }
    await settle();
    manager.destroy();
    expect(delays).to.deep.equal([1000, 2000, 4000, 8000, 16000, 30000, 30000]);
    expect(dialer.attempts).to.equal(8);
    expect(new Set(errors)).to.deep.equal(new Set(['TUNA_EDGE_UNREACHABLE']));
    expect(manager.status()).to.deep.equal([]);
  });

  it('stops redialing once the binding is no longer wanted', async () => {
    const clock = new FakeClock();
    const dialer = new RefusingDialer();
    const manager = new TunnelManager(dialer, clock, handler, new StaticKeySource(new Map([['k', 'key']])), {});
    manager.apply([{ bindingId: 'b', edges: [EDGE], keyRef: 'k' }]);
    await settle();
    expect(clock.pending()).to.have.length(1);
    manager.apply([]);
    await settle();
    expect(clock.pending()).to.have.length(0);
    expect(dialer.attempts).to.equal(1);
  });
});
