import { expect } from 'chai';
import { Agent, InvalidGraphError } from '../../src/agent/index.js';
import { createLogger } from '../../src/cli/log.js';
import { DataPlane, StaticEndpointResolver } from '../../src/dataplane/index.js';
import type { HttpRoute, RouteGraph } from '../../src/model/index.js';
import { startTunnelHarness } from '../support/backend-harness.js';
import type { TunnelHarness } from '../support/backend-harness.js';
import { graphWith, route } from '../support/graph-builders.js';
import { RecordingTunnels } from '../support/operator-fakes.js';

// The agent validates every graph before the data plane or the tunnels take it (validate(), as
// Envoy Gateway validates its IR before publishing it): a graph that breaks an invariant is
// refused and the last good one keeps serving.

const HOST = 'app.test';
const BINDING = `binding/host/${HOST}`;

/** answering is a route that answers `body` itself (no backend needed). */
const answering = (body: string): HttpRoute => route(`route/${body}`, { type: 'Prefix', value: '/' }, { backends: [], filters: [{ type: 'DirectResponse', statusCode: 200, body }] });

const served = (body: string): RouteGraph => graphWith(HOST, [answering(body)]);

const breakers: [string, (g: RouteGraph) => void, string][] = [
  ['two bindings with one id', (g) => g.bindings.push({ ...g.bindings[0]! }), `duplicate id ${BINDING}`],
  ['a virtual host on a listener that does not exist', (g) => (g.virtualHosts[0]!.listenerId = `${BINDING}/listener/gone`), `${BINDING}/listener/http/vhost/${HOST}: unknown listener ${BINDING}/listener/gone`],
];

describe('the agent refuses a graph that fails validate()', () => {
  let harness: TunnelHarness | undefined;
  afterEach(async () => {
    await harness?.close();
    harness = undefined;
  });

  for (const [what, breakGraph, problem] of breakers) {
    it(`refuses ${what}, naming the problem, and the last good graph still routes`, async () => {
      const dataPlane = new DataPlane({ endpoints: new StaticEndpointResolver() });
      const tunnels = new RecordingTunnels();
      const agent = new Agent(dataPlane, tunnels);
      await agent.apply(served('good'));
      harness = await startTunnelHarness(dataPlane, { bindingId: BINDING });
      expect((await harness.request({ ':authority': HOST, ':path': '/' })).body).to.equal('good');

      const bad = served('bad');
      breakGraph(bad);
      const refusal = await agent.apply(bad).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(refusal).to.be.instanceOf(InvalidGraphError);
      const err = refusal as InvalidGraphError;
      expect(err.code).to.equal('TUNA_AGENT_GRAPH_INVALID');
      expect(err.problems).to.include(problem);
      // the line the CLI logs for it (a reload of tuna run, the operator's failed sync) names the problem
      const lines: string[] = [];
      createLogger({ out: (l) => lines.push(l), err: (l) => lines.push(l) }, 'text').warn('Reload failed, still serving the previous manifests', { err });
      expect(lines).to.have.length(1);
      expect(lines[0]).to.contain(problem);

      const after = await harness.request({ ':authority': HOST, ':path': '/' });
      expect([after.status, after.body]).to.deep.equal([200, 'good']);
      expect(tunnels.applied).to.have.length(1);
    });
  }

  it('names the first three problems in its message and counts the rest', () => {
    const err = new InvalidGraphError(['a: 1', 'b: 2', 'c: 3', 'd: 4', 'e: 5']);
    expect(err.message).to.equal('route graph refused, the last good one keeps serving: a: 1; b: 2; c: 3; and 2 more');
  });
});
