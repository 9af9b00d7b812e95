// operator-leader.test.ts — one writer among the operator's replicas, through a Lease on the real
// apiserver: exactly one leads, a clean stop hands over at once, a vanished leader after expiry.
import { expect } from 'chai';
import { CoordinationV1Api, CoreV1Api } from '@kubernetes/client-node';
import { LeaderElector } from '../../src/operator/leader-elector.js';
import { clusterConfig, waitFor } from './cluster-env.js';

describe('operator: leader election with a Lease', function () {
  this.timeout(60_000);
  const namespace = `tuna-lease-${process.pid}`;
  let core: CoreV1Api;
  const electors: LeaderElector[] = [];
  const errors: string[] = [];

  const elector = (identity: string, name: string): LeaderElector => {
    const e = new LeaderElector(clusterConfig(), { namespace, name, identity, leaseDurationSeconds: 2, retryMs: 200, onError: (err) => errors.push(`${identity}: ${String(err)}`) });
    electors.push(e);
    e.start();
    return e;
  };

  before(async () => {
    core = clusterConfig().makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: namespace } } });
  });

  after(async () => {
    for (const e of electors) await e.stop();
    await core.deleteNamespace({ name: namespace }).catch(() => undefined);
  });

  it('elects exactly one of two replicas, and a clean stop hands over at once', async () => {
    const a = elector('replica-a', 'clean');
    const b = elector('replica-b', 'clean');
    const first = await waitFor('a leader', 10_000, async () => (a.isLeader() ? a : b.isLeader() ? b : undefined));
    const second = first === a ? b : a;
    // it stays one: over several renewals the other never leads
    for (let i = 0; i < 8; i++) {
      await new Promise((r) => setTimeout(r, 150));
      expect([a.isLeader(), b.isLeader()].filter(Boolean)).to.have.length(1);
    }
    const lease = await clusterConfig().makeApiClient(CoordinationV1Api).readNamespacedLease({ name: 'clean', namespace });
    expect(lease.spec?.holderIdentity).to.equal(first === a ? 'replica-a' : 'replica-b');
    const started = Date.now();
    await first.stop();
    await waitFor('the other replica to lead', 10_000, async () => (second.isLeader() ? true : undefined));
    expect(Date.now() - started, 'a released Lease is taken without waiting for it to expire').to.be.below(2000);
    expect(errors).to.deep.equal([]);
  });

  it('takes over from a leader that vanished, once its Lease expired', async () => {
    // a replica that crashed: its Lease was renewed just now and will not be again
    await clusterConfig()
      .makeApiClient(CoordinationV1Api)
      .createNamespacedLease({ namespace, body: { metadata: { name: 'crash' }, spec: { holderIdentity: 'crashed', leaseDurationSeconds: 2, renewTime: micro(new Date()), acquireTime: micro(new Date()), leaseTransitions: 0 } } });
    const successor = elector('successor', 'crash');
    await new Promise((r) => setTimeout(r, 1000));
    expect(successor.isLeader(), 'not before the Lease expired').to.equal(false);
    await waitFor('the successor to lead', 10_000, async () => (successor.isLeader() ? true : undefined));
    const lease = await clusterConfig().makeApiClient(CoordinationV1Api).readNamespacedLease({ name: 'crash', namespace });
    expect(lease.spec?.holderIdentity).to.equal('successor');
    expect(lease.spec?.leaseTransitions).to.equal(1);
    expect(errors).to.deep.equal([]);
  });
});

/** micro formats a time as the API's MicroTime (six fractional digits). */
function micro(date: Date): Date {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z') as unknown as Date;
}
