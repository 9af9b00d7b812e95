import { expect } from 'chai';
import { ClientFairness } from '../../src/edge/fronts/client-fairness.js';

describe('ClientFairness', () => {
  it('grants a client up to the cap per binding, refuses the next, and grants again after a release', () => {
    const fairness = new ClientFairness(3);
    const slots = [1, 2, 3].map(() => fairness.acquire('binding/host/a', '10.0.0.1'));
    expect(slots.every((s) => s !== undefined)).to.equal(true);
    expect(fairness.acquire('binding/host/a', '10.0.0.1')).to.equal(undefined);
    slots[0]!();
    expect(fairness.inFlight('binding/host/a', '10.0.0.1')).to.equal(2);
    expect(fairness.acquire('binding/host/a', '10.0.0.1')).to.not.equal(undefined);
  });

  it('counts each (binding, client address) apart', () => {
    const fairness = new ClientFairness(1);
    expect(fairness.acquire('binding/host/a', '10.0.0.1')).to.not.equal(undefined);
    expect(fairness.acquire('binding/host/a', '10.0.0.2')).to.not.equal(undefined);
    expect(fairness.acquire('binding/host/b', '10.0.0.1')).to.not.equal(undefined);
    expect(fairness.acquire('binding/host/a', '10.0.0.1')).to.equal(undefined);
  });

  it('gives a slot back once however often its release is called', () => {
    const fairness = new ClientFairness(2);
    const release = fairness.acquire('binding/host/a', '10.0.0.1')!;
    fairness.acquire('binding/host/a', '10.0.0.1');
    release();
    release();
    expect(fairness.inFlight('binding/host/a', '10.0.0.1')).to.equal(1);
  });
});
