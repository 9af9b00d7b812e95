/**
 * Statuses are written beside the syncs: a new Ingress waited behind the status PATCHes
 * of a whole batch before its own sync could start (24.9 s at 1,000 hosts in the scale benchmark).
 * Here the status writer holds every write until the test lets it go: a change that arrives
 * meanwhile is served (its binding reaches the tunnels) while the first write is still held, the
 * newer statuses replace the older ones between two PATCHes, and nothing is lost.
 */
import { expect } from 'chai';
import type { KubernetesObject } from '@kubernetes/client-node';
import { DataPlane, StaticEndpointResolver } from '../../src/dataplane/index.js';
import type { ObjectRef, ObjectStatus } from '../../src/model/index.js';
import { EdgeReconciler, Operator, StatusLane, TunnelKeys } from '../../src/operator/index.js';
import type { StatusWriter, WriteReport } from '../../src/operator/index.js';
import { FakeEdgeControl } from '../support/fake-edge-control.js';
import { ChangingObjects, RecordingTunnels, lbService } from '../support/operator-fakes.js';

const service = lbService;

/** HeldWriter records each write's objects and holds it until `release()`; it stops between objects when asked. */
class HeldWriter implements Pick<StatusWriter, 'write'> {
  readonly writes: string[][] = [];
  readonly written: string[] = [];
  #release: (() => void)[] = [];
  #started: (() => void)[] = [];
  #open = false;

  async write(statuses: readonly ObjectStatus[], _current: (ref: ObjectRef) => KubernetesObject | undefined, shouldStop: () => boolean = () => false): Promise<WriteReport> {
    const names = statuses.filter((s) => s.status !== undefined).map((s) => s.ref.name);
    this.writes.push(names);
    for (const w of this.#started.splice(0)) w();
    const report: WriteReport = { written: 0, unchanged: 0, gone: 0, failed: 0 };
    for (const name of names) {
      if (shouldStop()) break;
      if (!this.#open) await new Promise<void>((resolve) => this.#release.push(resolve));
      this.written.push(name);
      report.written++;
    }
    return report;
  }

  /** started settles once a write has begun (at least `count` in all). */
  async started(count: number): Promise<void> {
    while (this.writes.length < count) await new Promise<void>((resolve) => this.#started.push(resolve));
  }

  /** releaseAll lets every held PATCH go, now and from then on. */
  releaseAll(): void {
    this.#open = true;
    for (const r of this.#release.splice(0)) r();
  }

  /** releaseOne lets the oldest held PATCH go. */
  releaseOne(): void {
    this.#release.shift()?.();
  }
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('operator: statuses written beside the syncs', () => {
  it('serves a new object while the statuses of the sync before are still being written', async () => {
    const objects = new ChangingObjects();
    objects.items = [service('a'), service('b'), service('c')];
    const tunnels = new RecordingTunnels();
    const writer = new HeldWriter();
    const operator = new Operator({
      objects,
      dataPlane: new DataPlane({ endpoints: new StaticEndpointResolver() }),
      endpoints: new StaticEndpointResolver(),
      tunnels,
      writer: writer as unknown as StatusWriter,
      reconciler: new EdgeReconciler(new FakeEdgeControl(), new TunnelKeys(), { clusterId: 'c' }),
      translate: { baseDomain: 'tuna.example.com' },
    });
    // start() syncs once and waits for its statuses: let them go
    const started = operator.start();
    await writer.started(1);
    writer.releaseAll();
    await started;
    const releasedBefore = writer.written.length;

    // a sync of the change loop whose statuses are held
    const heldWriter = new HeldWriter();
    (writer as unknown as { write: HeldWriter['write'] }).write = heldWriter.write.bind(heldWriter);
    objects.items = [...objects.items, service('d')];
    objects.change();
    await heldWriter.started(1);
    heldWriter.releaseOne(); // one PATCH of that sync's statuses is written; the rest are held

    // a new object arrives while those statuses are held: its sync runs and serves it
    objects.items = [...objects.items, service('e')];
    objects.change();
    for (let i = 0; i < 200 && !tunnels.applied.some((ids) => ids.some((id) => id.includes('/e-default.'))); i++) await tick();
    expect(tunnels.applied.at(-1)?.filter((id) => id.includes('-default.')).length, `tunnels applied: ${JSON.stringify(tunnels.applied.at(-1))}`).to.equal(5);
    expect(heldWriter.written, 'the first write is still held').to.have.length(1);

    // the held write stops between PATCHes for the newer statuses, which are written whole
    heldWriter.releaseAll();
    await operator.statusesWritten();
    expect(heldWriter.writes.length, 'writes: the held one and the newer one').to.equal(2);
    expect(heldWriter.writes[1]).to.include.members(['a', 'b', 'c', 'd', 'e']);
    expect(new Set(heldWriter.written.slice(1))).to.include.members(['a', 'b', 'c', 'd', 'e']);
    expect(releasedBefore).to.equal(3);
    await operator.stop();
  });
});

describe('StatusLane', () => {
  it('writes only the newest of the sets queued while one is written, and tells every submitter', async () => {
    const writer = new HeldWriter();
    const lane = new StatusLane({ writer: writer as unknown as StatusWriter, lookup: () => () => undefined });
    const status = (name: string): ObjectStatus => ({ ref: { kind: 'Service', name, namespace: 'default' }, status: { loadBalancer: {} }, events: [] }) as unknown as ObjectStatus;
    const first = lane.submit([status('one')]);
    await writer.started(1);
    const second = lane.submit([status('two')]);
    const third = lane.submit([status('three')]);
    writer.releaseAll();
    const reports = await Promise.all([first, second, third]);
    await lane.idle();
    // the first was being written (its one PATCH was held, then let go); the second was replaced by the third before it began
    expect(writer.writes).to.deep.equal([['one'], ['three']]);
    expect(reports[1]).to.deep.equal(reports[2]);
    expect(reports[2]?.statuses?.written).to.equal(1);
  });
});
