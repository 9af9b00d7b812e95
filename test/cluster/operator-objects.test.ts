// operator-objects.test.ts — the operator's object cache on a real apiserver: informers list and
// watch what the translators read, and the translated graph follows creates, updates and deletes.
import { expect } from 'chai';
import { CoreV1Api, DiscoveryV1Api, NetworkingV1Api } from '@kubernetes/client-node';
import { translateObjects } from '../../src/agent/state.js';
import type { AgentState } from '../../src/agent/state.js';
import { KubeObjects } from '../../src/operator/kube-objects.js';
import { clusterConfig, waitFor } from './cluster-env.js';

describe('operator: object cache on the test cluster', function () {
  this.timeout(120_000);
  const namespace = `tuna-op-${process.pid}`;
  let core: CoreV1Api;
  let discovery: DiscoveryV1Api;
  let networking: NetworkingV1Api;
  let objects: KubeObjects;
  let state: AgentState;
  let changes = 0;
  const errors: string[] = [];

  const translate = (): void => {
    state = translateObjects(objects.objects());
    changes++;
  };
  const bindingIds = (): string[] => state.graph.bindings.map((b) => b.id).filter((id) => id.includes(namespace));

  before(async () => {
    const config = clusterConfig();
    core = config.makeApiClient(CoreV1Api);
    discovery = config.makeApiClient(DiscoveryV1Api);
    networking = config.makeApiClient(NetworkingV1Api);
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    objects = new KubeObjects(config, { debounceMs: 50, retryMs: 1000, onError: (kind, err) => errors.push(`${kind.kind}: ${String(err)}`) });
    objects.onChange(translate);
    await objects.start();
    // an apiserver re-initialising its storage after a CRD change answers 429 for a moment: start()
    // rides that out; only failures of the watches afterwards count below
    errors.length = 0;
    translate();
  });

  after(async () => {
    await objects?.stop();
    await core?.deleteNamespace({ name: namespace }).catch(() => undefined);
  });

  it('lists the cluster at start: the namespace just made is in the first snapshot', () => {
    const names = objects
      .objects()
      .filter((o) => o.kind === 'Namespace')
      .map((o) => o.metadata?.name);
    expect(names).to.include(namespace);
    expect(objects.objects().every((o) => typeof o.apiVersion === 'string' && typeof o.kind === 'string')).to.equal(true);
  });

  it('publishes a LoadBalancer Service of class tuna with its EndpointSlice, and unpublishes it when deleted', async () => {
    await core.createNamespacedService({
      namespace,
      body: {
        metadata: { name: 'db' },
        spec: { type: 'LoadBalancer', loadBalancerClass: 'tuna', ports: [{ name: 'pg', port: 5432, protocol: 'TCP' }] },
      },
    });
    await discovery.createNamespacedEndpointSlice({
      namespace,
      body: {
        metadata: { name: 'db-1', labels: { 'kubernetes.io/service-name': 'db' } },
        addressType: 'IPv4',
        endpoints: [{ addresses: ['198.18.250.7'], conditions: { ready: true } }],
        ports: [{ name: 'pg', port: 15432, protocol: 'TCP' }],
      },
    });
    await waitFor('the Service binding and its endpoint', 30_000, async () =>
      bindingIds().some((id) => id.startsWith('binding/tcp-port/')) && state.endpoints.get(`${namespace}/db`)?.get('pg')?.[0]?.address === '198.18.250.7' ? true : undefined,
    );
    const status = state.statuses.find((s) => s.ref.kind === 'Service' && s.ref.namespace === namespace && s.ref.name === 'db');
    expect(status, 'the translator gave the Service a status').to.not.equal(undefined);

    await core.deleteNamespacedService({ name: 'db', namespace });
    await waitFor('the Service binding gone', 30_000, async () => (bindingIds().some((id) => id.startsWith('binding/tcp-port/')) ? undefined : true));
  });

  it('follows an Ingress of class tuna through create, update and delete', async () => {
    const host = `app.${namespace}.test`;
    await core.createNamespacedService({ namespace, body: { metadata: { name: 'web' }, spec: { ports: [{ name: 'http', port: 80 }] } } });
    const ingress = {
      metadata: { name: 'web' },
      spec: {
        ingressClassName: 'tuna',
        rules: [{ host, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { name: 'http' } } } }] } }],
      },
    };
    await networking.createNamespacedIngress({ namespace, body: ingress });
    await waitFor('the Ingress host', 30_000, async () => (state.graph.virtualHosts.some((v) => v.hostname === host) ? true : undefined));

    const moved = `moved.${namespace}.test`;
    await networking.patchNamespacedIngress({ name: 'web', namespace, body: [{ op: 'replace', path: '/spec/rules/0/host', value: moved }] });
    await waitFor('the updated host', 30_000, async () =>
      state.graph.virtualHosts.some((v) => v.hostname === moved) && !state.graph.virtualHosts.some((v) => v.hostname === host) ? true : undefined,
    );

    const before = changes;
    await networking.deleteNamespacedIngress({ name: 'web', namespace });
    await waitFor('the host gone', 30_000, async () => (state.graph.virtualHosts.some((v) => v.hostname === moved) ? undefined : true));
    expect(changes).to.be.greaterThan(before);
    expect(errors, 'no watch failed').to.deep.equal([]);
  });
});
