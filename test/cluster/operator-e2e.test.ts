// operator-e2e.test.ts — the whole path on a real cluster: an Ingress of class tuna and a
// Deployment's Service, the operator (object cache → translators → data plane + tunnels + status
// writer), a tuna edge, and requests that come back from the pods through the tunnel.
import { expect } from 'chai';
import { CoreV1Api, NetworkingV1Api } from '@kubernetes/client-node';
import { DataPlane, StaticEndpointResolver } from '../../src/dataplane/index.js';
import { KubeObjects } from '../../src/operator/kube-objects.js';
import { Operator, OperatorTunnels } from '../../src/operator/operator.js';
import type { SyncResult } from '../../src/operator/operator.js';
import { StatusWriter } from '../../src/operator/status-writer.js';
import { newTestManager } from '../support/tunnel-manager-fixture.js';
import { http1, startTestEdge } from '../support/tunnel-harness.js';
import type { TestEdge } from '../support/tunnel-harness.js';
import { clusterConfig, deployEchoBehindIngress, waitFor } from './cluster-env.js';


describe('operator: an Ingress on the test cluster served through a tuna edge', function () {
  this.timeout(180_000);
  const namespace = `tuna-e2e-${process.pid}`;
  const host = `echo.${namespace}.test`;
  const bindingId = `binding/host/${host}`;
  let core: CoreV1Api;
  let networking: NetworkingV1Api;
  let edge: TestEdge;
  let operator: Operator;
  let last: SyncResult | undefined;
  const errors: string[] = [];

  before(async () => {
    const config = clusterConfig();
    core = config.makeApiClient(CoreV1Api);
    networking = config.makeApiClient(NetworkingV1Api);
    await deployEchoBehindIngress(config, namespace, host, 2);

    // The edge knows the binding and its key; the operator holds that key by binding id (the edge
    // reconciler will mint such keys; here the test hands it over).
    edge = await startTestEdge([{ id: bindingId, kind: 'host', hostnames: [host] }], { limits: { tunnelWaitMs: 2000 } });
    const endpoints = new StaticEndpointResolver();
    const dataPlane = new DataPlane({ endpoints, onError: (err) => errors.push(`data plane: ${String(err)}`) });
    const manager = newTestManager(dataPlane, new Map([[bindingId, edge.keys.get(bindingId)!]]));
    operator = new Operator({
      objects: new KubeObjects(config, { debounceMs: 50, retryMs: 1000 }),
      dataPlane,
      endpoints,
      tunnels: new OperatorTunnels(manager, [edge.endpoint], 2),
      writer: new StatusWriter(config),
      onError: (err) => errors.push(`sync: ${String(err)}`),
      onSynced: (result) => (last = result),
    });
    await operator.start();
  });

  after(async () => {
    await operator?.stop();
    await edge?.edge.close();
    await core?.deleteNamespace({ name: namespace }).catch(() => undefined);
  });

  it('answers from both pods through the tunnel, with the public Host and path', async () => {
    await waitFor('2 tunnel connections at the edge', 30_000, async () => (edge.edge.registry.count().get(bindingId) === 2 ? true : undefined));
    const pods = new Set<string>();
    for (let i = 0; i < 20 && pods.size < 2; i++) {
      const res = await http1(edge.httpPort, host, `/hello/${i}`);
      expect(res.status).to.equal(200);
      const echo = JSON.parse(res.body.toString()) as { pod: string; namespace: string; path: string; host: string };
      expect(echo).to.include({ namespace, path: `/hello/${i}`, host });
      pods.add(echo.pod);
    }
    expect(pods.size, 'both replicas answered').to.equal(2);
  });

  it('writes the Ingress status', async () => {
    const ingress = await waitFor('the Ingress status', 30_000, async () => {
      const got = await networking.readNamespacedIngressStatus({ name: 'echo', namespace });
      return got.status?.loadBalancer?.ingress?.length ? got : undefined;
    });
    expect(ingress.status?.loadBalancer?.ingress?.map((i) => i.hostname)).to.deep.equal([host]);
  });

  it('closes the tunnels when the Ingress is deleted, and the edge stops routing the host', async () => {
    await networking.deleteNamespacedIngress({ name: 'echo', namespace });
    await waitFor('the binding gone from the graph', 30_000, async () => (last && !last.state.graph.bindings.some((b) => b.id === bindingId) ? true : undefined));
    await waitFor('no tunnel connection at the edge', 30_000, async () => ((edge.edge.registry.count().get(bindingId) ?? 0) === 0 ? true : undefined));
    const res = await http1(edge.httpPort, host, '/after');
    expect(res.status).to.be.oneOf([502, 503]);
    expect(errors).to.deep.equal([]);
  });
});
