// soak.test.ts — the soak's short form (test/soak, docs/reliability.md) in the cluster tier: the
// stack of the full soak (two replicas of the operator from charts/tuna, two store-mode edges on
// one PostgreSQL, an Ingress, a Gateway with an HTTPRoute and a GRPCRoute, and a LoadBalancer
// Service), traffic at a fixed rate, and the most important faults once each: kill -9 of the
// leading operator pod, of PostgreSQL, of one edge node, the Ingress host's key revoked out of band,
// kill -9 of a following operator pod, the host's reservation released out of band. It fails on any
// target or invariant that does not hold.
import { expect } from 'chai';
import { runSoak } from '../soak/soak.js';

describe('soak (short form): faults under traffic, targets and invariants', function () {
  this.timeout(900_000);

  it('keeps every target and invariant through kill -9 of the operator leader, PostgreSQL, an edge node and a follower, a revoked key and a released reservation', async () => {
    const report = await runSoak({ minutes: 0, ratePerSecond: 30, settleMs: 12_000, log: (line) => console.log(`      ${line}`) });
    console.log(report.text.split('\n').map((line) => `      ${line}`).join('\n'));
    expect(report.checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.detail}`)).to.deep.equal([]);
  });
});
