import { expect } from 'chai';
import type { KubernetesObject } from '@kubernetes/client-node';
import { InvalidGraphError } from '../../src/agent/index.js';
import { DataPlane, StaticEndpointResolver } from '../../src/dataplane/index.js';
import type { ObjectRef } from '../../src/model/index.js';
import { Operator, ROUTE_GRAPH_REFUSED } from '../../src/operator/index.js';
import type { RefusalEvent } from '../../src/operator/index.js';
import { FakeClock } from '../support/tunnel-fake-clock.js';
import { ChangingObjects, RecordingTunnels, lbService } from '../support/operator-fakes.js';

// The operator validates each graph before anything acts on it (the endpoints, the edge, the
// tunnels, the data plane). A refused graph fails the sync, whose log line names the problems, and
// the leader records a Warning on the objects they came from; the last good graph keeps serving.
// The graph the operator serves has the edge's binding ids (edgeIdOf): two bindings given one
// edge id collide there although the translated graph was valid.

/** RecordedEvents is an event recorder that keeps what it is asked to record. */
class RecordedEvents {
  refusals: { ref: ObjectRef; message: string; found: boolean }[] = [];
  record(): Promise<number> {
    return Promise.resolve(0);
  }
  recordRefusal(events: readonly RefusalEvent[], current: (ref: ObjectRef) => KubernetesObject | undefined): Promise<number> {
    for (const e of events) this.refusals.push({ ...e, found: current(e.ref) !== undefined });
    return Promise.resolve(events.length);
  }
}

describe('operator: a route graph that fails validate() is refused', () => {
  let operator: Operator | undefined;
  afterEach(async () => {
    await operator?.stop();
    operator = undefined;
  });

  it('fails the sync naming the problem, records a RouteGraphRefused Warning, and keeps serving the last good graph', async () => {
    const objects = new ChangingObjects();
    objects.items = [lbService('web'), lbService('api')];
    const dataPlane = new DataPlane({ endpoints: new StaticEndpointResolver() });
    const tunnels = new RecordingTunnels();
    const events = new RecordedEvents();
    const errors: unknown[] = [];
    let isColliding = false;
    const clock = new FakeClock();
    operator = new Operator({
      objects,
      dataPlane,
      endpoints: new StaticEndpointResolver(),
      tunnels,
      events,
      clock,
      edgeIdOf: (id) => (isColliding ? 'binding/host/one.tuna.example.com' : id),
      translate: { baseDomain: 'tuna.example.com' },
      onError: (err) => errors.push(err),
    });
    await operator.start();
    const good = dataPlane.graph();
    expect(good.bindings).to.have.length(2);
    expect(tunnels.applied).to.have.length(1);

    isColliding = true;
    objects.items = [...objects.items, lbService('new')];
    const refused = operator.sync().then(
      () => undefined,
      (err: unknown) => err,
    );
    const err = await refused;
    expect(err).to.be.instanceOf(InvalidGraphError);
    expect((err as InvalidGraphError).code).to.equal('TUNA_AGENT_GRAPH_INVALID');
    expect((err as Error).message).to.contain('duplicate id binding/host/one.tuna.example.com');

    // the last good graph is served, and the tunnels were not asked for the bad one
    expect(dataPlane.graph()).to.equal(good);
    expect(tunnels.applied).to.have.length(1);
    // a Warning on a Service the colliding binding came from, with the problem in it
    expect(events.refusals).to.have.length(1);
    expect(events.refusals[0]!.ref).to.include({ kind: 'Service', namespace: 'default' });
    expect(events.refusals[0]!.found, 'the event names an object of the cache').to.equal(true);
    expect(events.refusals[0]!.message).to.contain('duplicate id binding/host/one.tuna.example.com');
    expect(ROUTE_GRAPH_REFUSED).to.equal('RouteGraphRefused');

    // once the collision is gone, the next sync serves the new graph
    isColliding = false;
    await operator.sync();
    expect(dataPlane.graph().bindings).to.have.length(3);
    expect(errors).to.deep.equal([]);
  });

  it('records no event on a replica that is not the leader, and still refuses the graph', async () => {
    const objects = new ChangingObjects();
    objects.items = [lbService('web'), lbService('api')];
    const dataPlane = new DataPlane({ endpoints: new StaticEndpointResolver() });
    const events = new RecordedEvents();
    operator = new Operator({
      objects,
      dataPlane,
      endpoints: new StaticEndpointResolver(),
      tunnels: new RecordingTunnels(),
      events,
      clock: new FakeClock(),
      leader: { isLeader: () => false, on: () => undefined },
      edgeIdOf: () => 'binding/host/one.tuna.example.com',
      translate: { baseDomain: 'tuna.example.com' },
    });
    const err = await operator.start().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(InvalidGraphError);
    expect(dataPlane.graph().bindings).to.have.length(0);
    expect(events.refusals).to.deep.equal([]);
  });
});
