/**
 * A sync of the change loop yields to a new change only after a slice of reconcile work:
 * under a stream of changes (a batch of Ingresses being created), each sync would otherwise pay the
 * whole translation and apply for one round of bindings, and a batch of N would take N/8 syncs.
 */
import { expect } from 'chai';
import { DataPlane, StaticEndpointResolver } from '../../src/dataplane/index.js';
import { EdgeReconciler, Operator, TunnelKeys } from '../../src/operator/index.js';
import type { SyncResult } from '../../src/operator/index.js';
import type { Clock, ClockTimer } from '../../src/tunnel/index.js';
import { FakeEdgeControl } from '../support/fake-edge-control.js';
import { ChangingObjects, RecordingTunnels, lbService } from '../support/operator-fakes.js';

const service = lbService;

/** StepClock is a clock the test moves by hand; its timers are real (none fires in this test's span). */
class StepClock implements Clock {
  t = 0;
  now(): number {
    return this.t;
  }
  setTimeout(fn: () => void, ms: number): ClockTimer {
    return setTimeout(fn, ms);
  }
  clearTimeout(timer: ClockTimer): void {
    clearTimeout(timer as NodeJS.Timeout);
  }
}

describe('operator: a sync yields to a change only after a slice of work', () => {
  it('serves a batch created as a stream of changes in a few syncs, not one per round of eight', async () => {
    const objects = new ChangingObjects();
    objects.items = [service('seed')];
    const control = new FakeEdgeControl();
    const clock = new StepClock();
    const syncs: SyncResult[] = [];
    let done: (() => void) | undefined;
    const allServed = new Promise<void>((resolve) => (done = resolve));
    const operator = new Operator({
      objects,
      dataPlane: new DataPlane({ endpoints: new StaticEndpointResolver() }),
      endpoints: new StaticEndpointResolver(),
      tunnels: new RecordingTunnels(),
      reconciler: new EdgeReconciler(control, new TunnelKeys(), { clusterId: 'c' }),
      translate: { baseDomain: 'tuna.example.com' },
      clock,
      minSliceMs: 100,
      onSynced: (result) => {
        syncs.push(result);
        if ((result.edge?.deferred ?? []).length === 0 && result.edge?.ready.size === 401) done?.();
        // bounded: a loop that never finishes fails here instead of running on
        if (syncs.length > 1000) done?.();
      },
    });
    await operator.start();
    // each call to the edge takes 1 ms of the clock, and a new change arrives with every one of them
    control.gate = () => {
      clock.t += 1;
      objects.change();
      return Promise.resolve();
    };
    objects.items = [service('seed'), ...Array.from({ length: 400 }, (_, i) => service(`s${i}`))];
    syncs.length = 0;
    objects.change();
    await allServed;
    await operator.stop();
    // 400 bindings make 800 calls; a sync that yields has run at least 100 calls of them
    expect(syncs.length, `${syncs.length} syncs`).to.be.at.most(12);
    expect(syncs.at(-1)?.edge?.ready.size).to.equal(401);
  });
});
