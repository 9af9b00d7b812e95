import { expect } from 'chai';
import { ServedBindings } from '../../src/edge/store-mode/served-bindings.js';
import type { Reservation, ServedChanges, ServedKey } from '../../src/edge/store/index.js';

const NOW = Date.UTC(2026, 0, 1);

function domain(id: string, value: string): Reservation {
  return {
    id, accountId: 'acct', kind: 'domain', value, name: null, labels: {}, domainType: 'subdomain',
    verificationToken: null, verified: true, createdAt: NOW, updatedAt: NOW,
  };
}

function read(part: Partial<ServedChanges>): ServedChanges {
  return { seq: 1, now: NOW, isFull: false, reservations: [], tunnelKeys: [], ...part };
}

const key = (id: string, reservationId: string, expiresAt = NOW + 60_000, isLive = true): ServedKey =>
  ({ id, reservationId, protocol: 'tls', expiresAt, isLive });

describe('edge served bindings (the directory state the change feed is applied to)', () => {
  it('serves a hostname released and reserved again by another reservation in one read', () => {
    const served = new ServedBindings([]);
    served.apply(read({ isFull: true, reservations: [{ reservation: domain('r1', 'app.tuna.test'), isHeld: true }] }));
    const changed = served.apply(read({
      reservations: [
        { reservation: domain('r2', 'app.tuna.test'), isHeld: true },
        { reservation: domain('r1', 'app.tuna.test'), isHeld: false },
      ],
    }));
    expect(changed).to.equal(true);
    expect(served.index.byHost('app.tuna.test')?.id).to.equal('binding/host/app.tuna.test');
    expect(served.index.list()).to.have.length(1);
  });

  it('resolves wildcard reservations by the longest suffix and forgets them when released', () => {
    const served = new ServedBindings([]);
    served.apply(read({ isFull: true, reservations: [{ reservation: domain('w', '*.tuna.test'), isHeld: true }, { reservation: domain('e', 'a.tuna.test'), isHeld: true }] }));
    expect(served.index.byHost('A.tuna.test.')?.id).to.equal('binding/host/a.tuna.test');
    expect(served.index.byHost('x.y.tuna.test')?.id).to.equal('binding/host/*.tuna.test');
    served.apply(read({ reservations: [{ reservation: domain('w', '*.tuna.test'), isHeld: false }] }));
    expect(served.index.byHost('x.y.tuna.test')).to.equal(undefined);
    expect(served.index.byHost('a.tuna.test')?.id).to.equal('binding/host/a.tuna.test');
  });

  it('tells a change of binding from a read that changes none, and drops keys past their expiry', () => {
    const served = new ServedBindings([]);
    served.apply(read({ isFull: true, reservations: [{ reservation: domain('r', 'app.tuna.test'), isHeld: true }] }));
    expect(served.apply(read({ tunnelKeys: [key('k1', 'r', NOW + 1_000)] })), 'tls only now').to.equal(true);
    expect(served.apply(read({ tunnelKeys: [key('k2', 'r', NOW + 5_000)] })), 'still tls only').to.equal(false);
    expect(served.apply(read({ now: NOW + 2_000 })), 'k2 still live').to.equal(false);
    expect(served.index.byHost('app.tuna.test')?.tls).to.equal('terminate-in-cluster');
    expect(served.apply(read({ now: NOW + 6_000 })), 'both expired').to.equal(true);
    expect(served.index.byHost('app.tuna.test')?.tls).to.equal('edge');
  });

  it('replaces everything on a whole snapshot', () => {
    const served = new ServedBindings([]);
    served.apply(read({ isFull: true, reservations: [{ reservation: domain('r', 'old.tuna.test'), isHeld: true }], tunnelKeys: [key('k', 'r')] }));
    served.apply(read({ isFull: true, reservations: [{ reservation: domain('n', 'new.tuna.test'), isHeld: true }] }));
    expect(served.index.list().map((b) => b.id)).to.deep.equal(['binding/host/new.tuna.test']);
  });
});
