import { expect } from 'chai';
import 'reflect-metadata';
import type { KubernetesObject } from '@kubernetes/client-node';
import { container as rootContainer } from 'tsyringe';
import { DataPlane, StaticEndpointResolver } from '../../src/dataplane/index.js';
import type { ObjectRef, ObjectStatus, RouteGraph } from '../../src/model/index.js';
import {
  AcceptedCertificates,
  CERTIFICATES,
  SECRET_READER,
  SecretReader,
  DATA_PLANE,
  EDGE_RECONCILER,
  ENDPOINTS,
  OBJECT_SOURCE,
  OPERATOR_SETTINGS,
  STATUS_WRITER,
  TUNNEL_CONTROL,
  operatorFrom,
} from '../../src/operator/index.js';
import type { ObjectSource, ReconcileReport, StatusWriter, WriteReport } from '../../src/operator/index.js';
import { RecordingTunnels } from '../support/operator-fakes.js';

// The operator's composition root (src/operator/container.ts): a test swaps one part by registering it.
const objects: KubernetesObject[] = [
  { apiVersion: 'networking.k8s.io/v1', kind: 'IngressClass', metadata: { name: 'tuna' }, spec: { controller: 'tuna.dev/ingress-controller' } } as KubernetesObject,
  { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' }, spec: { ports: [{ name: 'http', port: 80 }] } } as KubernetesObject,
  {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name: 'web', namespace: 'default', uid: 'u1', generation: 1 },
    spec: { ingressClassName: 'tuna', rules: [{ host: 'web.tuna.test', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } }] },
  } as KubernetesObject,
];

const listedCache: ObjectSource = {
  onChange: () => undefined,
  start: () => Promise.resolve(),
  stop: () => Promise.resolve(),
  objects: () => objects,
  hasSynced: () => true,
  hasListed: () => true,
  absentKinds: () => [],
};


describe('operator composition root (tsyringe)', () => {
  it('assembles an operator from the registered parts: the cache, the tunnels, the reconciler and a status writer a test swapped in', async () => {
    const scope = rootContainer.createChildContainer();
    const endpoints = new StaticEndpointResolver();
    const tunnels = new RecordingTunnels();
    const reconciled: RouteGraph[] = [];
    const written: ObjectStatus[][] = [];
    scope.register(OBJECT_SOURCE, { useValue: listedCache });
    scope.register(ENDPOINTS, { useValue: endpoints });
    scope.register(DATA_PLANE, { useValue: new DataPlane({ endpoints }) });
    scope.register(TUNNEL_CONTROL, { useValue: tunnels });
    scope.register(EDGE_RECONCILER, {
      useValue: {
        reconcile: (graph: RouteGraph): Promise<ReconcileReport> => {
          reconciled.push(graph);
          return Promise.resolve({ ready: new Set(graph.bindings.map((b) => b.id)), addresses: new Map(), pending: [], reserved: 0, minted: 0, released: 0, revoked: 0, kept: 0 });
        },
      },
    });
    const writer = {
      write: (statuses: readonly ObjectStatus[], _current: (ref: ObjectRef) => KubernetesObject | undefined): Promise<WriteReport> => {
        written.push([...statuses]);
        return Promise.resolve({ written: statuses.length, unchanged: 0, gone: 0, failed: 0 });
      },
    } as unknown as StatusWriter;
    scope.register(STATUS_WRITER, { useValue: writer });
    scope.register(OPERATOR_SETTINGS, { useValue: { retryMs: 50 } });
    const operator = operatorFrom(scope);
    const result = await operator.start();
    await operator.stop();
    expect(reconciled).to.have.length(1);
    expect(tunnels.applied).to.deep.equal([result.state.graph.bindings.map((b) => b.id)]);
    expect(result.state.graph.bindings.length).to.equal(1);
    expect(written).to.have.length(1);
    expect(written[0]!.some((s) => s.ref.kind === 'Ingress' && s.ref.name === 'web')).to.equal(true);
  });

  it('writes no status when no STATUS_WRITER is registered (`--no-status`)', async () => {
    const scope = rootContainer.createChildContainer();
    const endpoints = new StaticEndpointResolver();
    scope.register(OBJECT_SOURCE, { useValue: listedCache });
    scope.register(ENDPOINTS, { useValue: endpoints });
    scope.register(DATA_PLANE, { useValue: new DataPlane({ endpoints }) });
    scope.register(TUNNEL_CONTROL, { useValue: new RecordingTunnels() });
    const operator = operatorFrom(scope);
    const result = await operator.start();
    await operator.stop();
    expect(result.statuses).to.equal(undefined);
    expect(result.edge).to.equal(undefined);
  });
  it('hands the registered SECRET_READER the Secrets the objects name and feeds CERTIFICATES after the sync', async () => {
    const scope = rootContainer.createChildContainer();
    const endpoints = new StaticEndpointResolver();
    const certificates = new AcceptedCertificates();
    const asked: string[] = [];
    const reader = new SecretReader({ get: (ref) => (asked.push(`${ref.namespace}/${ref.name}`), Promise.resolve(undefined)) }, { refreshMs: 0 });
    const withTls = objects.map((o) => (o.kind === 'Ingress' ? ({ ...o, spec: { ...(o as { spec: object }).spec, tls: [{ hosts: ['web.tuna.test'], secretName: 'web-cert' }] } } as KubernetesObject) : o));
    scope.register(OBJECT_SOURCE, { useValue: { ...listedCache, objects: () => withTls } });
    scope.register(ENDPOINTS, { useValue: endpoints });
    scope.register(DATA_PLANE, { useValue: new DataPlane({ endpoints, certificates }) });
    scope.register(TUNNEL_CONTROL, { useValue: new RecordingTunnels() });
    scope.register(SECRET_READER, { useValue: reader });
    scope.register(CERTIFICATES, { useValue: certificates });
    const operator = operatorFrom(scope);
    await operator.start();
    await operator.stop();
    expect(asked).to.deep.equal(['default/web-cert']);
    expect(certificates.names()).to.deep.equal([]);
  });
});
