// operator-rbac.test.ts — config/rbac/operator.yaml is enough for the operator and no more: with
// its ServiceAccount's token the object cache starts, the status writer writes and the Secret a
// listener names is read by name, the objects of a dedicated data plane are made and deleted, and
// the apiserver denies listing, watching or patching Secrets, binding any ClusterRole but the data
// planes', spec writes and pods. (Secrets may be created, replaced and deleted anywhere: a data
// plane's key Secret lives in its Gateway's namespace, and RBAC cannot narrow a rule to it.)
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { AuthorizationV1Api, CoreV1Api, KubeConfig, KubernetesObjectApi, NetworkingV1Api, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import type { KubernetesObject } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { translateObjects } from '../../src/agent/state.js';
import { KubeObjects } from '../../src/operator/kube-objects.js';
import { DataPlanes, KubeDataPlaneApi } from '../../src/operator/data-planes.js';
import { emptyGraph } from '../../src/model/index.js';
import { AcceptedCertificates } from '../../src/operator/accepted-certificates.js';
import { CoreSecretGetter, SecretReader } from '../../src/operator/secret-reader.js';
import { referencedSecrets, snapshotFromObjects } from '../../src/translate/index.js';
import { selfSignedCertificate } from '../support/tunnel-certs.js';
import { StatusWriter, objectLookup } from '../../src/operator/status-writer.js';
import { REPO_ROOT, clusterConfig, waitFor } from './cluster-env.js';

const SUBJECT = 'system:serviceaccount:tuna-system:tuna-operator';

describe('config/rbac/operator.yaml on the test cluster', function () {
  this.timeout(120_000);
  const namespace = `tuna-rbac-${process.pid}`;
  let admin: KubeConfig;
  let manifests: KubernetesObject[];
  let operatorConfig: KubeConfig;

  before(async () => {
    admin = clusterConfig();
    const objects = KubernetesObjectApi.makeApiClient(admin);
    manifests = parseAllDocuments(readFileSync(path.join(REPO_ROOT, 'config/rbac/operator.yaml'), 'utf8')).map((d) => d.toJS() as KubernetesObject);
    for (const m of manifests) await objects.create(m).catch((err: { code?: number }) => (err.code === 409 ? undefined : Promise.reject(err)));
    const core = admin.makeApiClient(CoreV1Api);
    await waitFor('the ServiceAccount', 30_000, () => core.readNamespacedServiceAccount({ name: 'tuna-operator', namespace: 'tuna-system' }));
    const token = await core.createNamespacedServiceAccountToken({ name: 'tuna-operator', namespace: 'tuna-system', body: { spec: { expirationSeconds: 600 } } });
    const cluster = admin.getCurrentCluster();
    if (!cluster) throw new Error('the admin kubeconfig has no cluster');
    operatorConfig = new KubeConfig();
    operatorConfig.loadFromOptions({
      clusters: [cluster],
      users: [{ name: 'tuna-operator', token: token.status?.token ?? '' }],
      contexts: [{ name: 'tuna-operator', cluster: cluster.name, user: 'tuna-operator' }],
      currentContext: 'tuna-operator',
    });
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    await core.createNamespacedService({ namespace, body: { metadata: { name: 'web' }, spec: { ports: [{ name: 'http', port: 80 }] } } });
    await admin.makeApiClient(NetworkingV1Api).createNamespacedIngress({
      namespace,
      body: {
        metadata: { name: 'web' },
        spec: { ingressClassName: 'tuna', rules: [{ host: `web.${namespace}.test`, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } }] },
      },
    });
  });

  after(async () => {
    await admin.makeApiClient(CoreV1Api).deleteNamespace({ name: namespace }).catch(() => undefined);
    const objects = KubernetesObjectApi.makeApiClient(admin);
    for (const m of [...manifests].reverse()) await objects.delete(m).catch(() => undefined);
  });

  it('lets the operator watch every kind and write the statuses it owns', async () => {
    const errors: string[] = [];
    const cache = new KubeObjects(operatorConfig, { retryMs: 500, onError: (kind, err) => errors.push(`${kind.kind}: ${String(err)}`) });
    try {
      await cache.start();
      expect(errors, 'every list and watch is allowed').to.deep.equal([]);
      const state = translateObjects(cache.objects());
      const ours = state.statuses.filter((s) => s.ref.namespace === namespace);
      const report = await new StatusWriter(operatorConfig).write(ours, objectLookup(cache.objects()));
      expect(report).to.include({ written: 1, failed: 0 });
      const kubeSystem = await operatorConfig.makeApiClient(CoreV1Api).readNamespace({ name: 'kube-system' });
      expect(kubeSystem.metadata?.uid, 'the cluster id is readable').to.be.a('string');
    } finally {
      await cache.stop();
    }
  });

  it('lets the operator read by name the Secret an Ingress names and terminate with it, and not list Secrets', async () => {
    const pair = selfSignedCertificate([`secure.${namespace}.test`]);
    const core = admin.makeApiClient(CoreV1Api);
    await core.createNamespacedSecret({ namespace, body: { metadata: { name: 'secure-cert' }, type: 'kubernetes.io/tls', stringData: { 'tls.crt': pair.cert, 'tls.key': pair.key } } });
    await admin.makeApiClient(NetworkingV1Api).createNamespacedIngress({
      namespace,
      body: {
        metadata: { name: 'secure' },
        spec: {
          ingressClassName: 'tuna',
          tls: [{ hosts: [`secure.${namespace}.test`], secretName: 'secure-cert' }],
          rules: [{ host: `secure.${namespace}.test`, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } }],
        },
      },
    });
    const cache = new KubeObjects(operatorConfig, { retryMs: 500 });
    const problems: string[] = [];
    const reader = new SecretReader(new CoreSecretGetter(operatorConfig), { refreshMs: 0, onProblem: (line) => problems.push(line) });
    try {
      await cache.start();
      const objects = cache.objects().filter((o) => o.metadata?.namespace === namespace || o.metadata?.namespace === undefined);
      const refs = referencedSecrets(snapshotFromObjects(objects).snapshot);
      expect(refs).to.deep.equal([{ namespace, name: 'secure-cert' }]);
      const secrets = await reader.read(refs);
      expect(problems, 'the get is allowed').to.deep.equal([]);
      const state = translateObjects([...objects, ...secrets]);
      const certificates = new AcceptedCertificates();
      certificates.update(state.graph, state.certificates);
      expect(certificates.names()).to.deep.equal([`${namespace}/secure-cert`]);
      expect(certificates.get({ namespace, name: 'secure-cert' })).to.deep.equal({ cert: pair.cert, key: pair.key });
      const listed = await operatorConfig.makeApiClient(CoreV1Api).listNamespacedSecret({ namespace }).then(
        () => 'listed',
        (err: { code?: number }) => err.code,
      );
      expect(listed, 'listing Secrets is forbidden').to.equal(403);
    } finally {
      await reader.stop();
      await cache.stop();
    }
  });

  it('lets the operator make and delete a dedicated data plane with its rights alone (ServiceAccount, ClusterRoleBinding to tuna-data-plane, key Secret, Deployment)', async () => {
    const planes = new DataPlanes(new KubeDataPlaneApi(operatorConfig), { image: 'tuna/operator:none', clusterRole: 'tuna-data-plane', edge: 'tcp://198.18.0.1:1', clusterId: 'rbac', baseDomain: 'tuna.test', connections: 2 });
    const source = { group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace, name: 'gw' };
    const graph = { ...emptyGraph(), bindings: [{ id: `binding/address/${namespace}/gw`, kind: 'address' as const, hostnames: [], dedicated: { replicas: 1 }, source }] };
    const gateways = new Map([[`${namespace}/gw`, { metadata: { name: 'gw', namespace, uid: '00000000-0000-0000-0000-000000000000' }, spec: { infrastructure: { labels: { team: 'rbac' } } } }]]);
    const key = () => ({ keyId: 'k', token: 't', edgeBindingId: 'binding/address/127.77.0.1' });
    const made = await planes.reconcile(graph, gateways, key);
    expect(made.error, String(made.error)).to.equal(undefined);
    expect(made.applied).to.equal(4);
    const gone = await planes.reconcile(emptyGraph(), new Map(), key);
    expect(gone.error, String(gone.error)).to.equal(undefined);
    const left = await admin.makeApiClient(RbacAuthorizationV1Api).listClusterRoleBinding({ labelSelector: `tuna.dev/gateway-namespace=${namespace}` });
    expect(left.items).to.deep.equal([]);
  });

  for (const [what, attributes, allowed] of [
    ['read the kube-system namespace (the cluster id)', { verb: 'get', resource: 'namespaces', name: 'kube-system' }, true],
    ['patch an Ingress status', { verb: 'patch', group: 'networking.k8s.io', resource: 'ingresses', subresource: 'status', namespace: 'default' }, true],
    ['read its key Secret', { verb: 'get', resource: 'secrets', namespace: 'tuna-system', name: 'tuna-tunnel-keys' }, true],
    ['replace its key Secret', { verb: 'update', resource: 'secrets', namespace: 'tuna-system', name: 'tuna-tunnel-keys' }, true],
    ['read a key shard', { verb: 'get', resource: 'secrets', namespace: 'tuna-system', name: 'tuna-tunnel-keys-00' }, true],
    ['replace the last key shard', { verb: 'update', resource: 'secrets', namespace: 'tuna-system', name: 'tuna-tunnel-keys-1f' }, true],
    // A dedicated data plane's key Secret (tuna-gw-<gateway>-key, in the Gateway's namespace) is
    // created, replaced on a new key and deleted by the operator: RBAC cannot narrow a rule to a
    // label or to names made at run time, so create, update and delete of Secrets are granted
    // everywhere (docs/dedicated-data-plane.md). Listing, watching and patching stay denied.
    ['replace a Secret past the shards (a data plane key Secret could be any name)', { verb: 'update', resource: 'secrets', namespace: 'tuna-system', name: 'tuna-tunnel-keys-20' }, true],
    ['delete a key shard (as any data plane key Secret)', { verb: 'delete', resource: 'secrets', namespace: 'tuna-system', name: 'tuna-tunnel-keys-00' }, true],
    ['renew its Lease', { verb: 'update', group: 'coordination.k8s.io', resource: 'leases', namespace: 'tuna-system', name: 'tuna-operator' }, true],
    // get by name, anywhere: a certificateRef may name a Secret of any namespace (docs/operator.md)
    ['get, by name, a Secret a listener names', { verb: 'get', resource: 'secrets', namespace: 'default', name: 'shop-cert' }, true],
    ['get, by name, another Secret of its namespace', { verb: 'get', resource: 'secrets', namespace: 'tuna-system', name: 'something-else' }, true],
    ['list Secrets', { verb: 'list', resource: 'secrets' }, false],
    ['list the Secrets of a namespace', { verb: 'list', resource: 'secrets', namespace: 'default' }, false],
    ['watch Secrets', { verb: 'watch', resource: 'secrets' }, false],
    ['watch the Secrets of a namespace', { verb: 'watch', resource: 'secrets', namespace: 'default' }, false],
    ['create a Secret in a Gateway\'s namespace (a data plane key Secret)', { verb: 'create', resource: 'secrets', namespace: 'default' }, true],
    ['update a Secret it did not write (as it replaces a data plane key Secret)', { verb: 'update', resource: 'secrets', namespace: 'default', name: 'shop-cert' }, true],
    ['patch a Secret', { verb: 'patch', resource: 'secrets', namespace: 'default', name: 'shop-cert' }, false],
    ['delete a Secret (as it deletes a data plane key Secret)', { verb: 'delete', resource: 'secrets', namespace: 'tuna-system', name: 'tuna-tunnel-keys' }, true],
    // the rest of a dedicated data plane: its Deployment, ServiceAccount and ClusterRoleBinding, bound to tuna-data-plane only
    ['create a Deployment', { verb: 'create', group: 'apps', resource: 'deployments', namespace: 'default' }, true],
    ['list Deployments (by the tuna.dev/data-plane label)', { verb: 'list', group: 'apps', resource: 'deployments' }, true],
    ['patch a Deployment', { verb: 'patch', group: 'apps', resource: 'deployments', namespace: 'default' }, false],
    ['create a ServiceAccount', { verb: 'create', resource: 'serviceaccounts', namespace: 'default' }, true],
    ['create a ServiceAccount token', { verb: 'create', resource: 'serviceaccounts', subresource: 'token', namespace: 'default', name: 'default' }, false],
    ['create a ClusterRoleBinding', { verb: 'create', group: 'rbac.authorization.k8s.io', resource: 'clusterrolebindings' }, true],
    ['bind the data planes\' ClusterRole', { verb: 'bind', group: 'rbac.authorization.k8s.io', resource: 'clusterroles', name: 'tuna-data-plane' }, true],
    ['bind cluster-admin', { verb: 'bind', group: 'rbac.authorization.k8s.io', resource: 'clusterroles', name: 'cluster-admin' }, false],
    ['escalate a ClusterRole', { verb: 'escalate', group: 'rbac.authorization.k8s.io', resource: 'clusterroles', name: 'tuna-data-plane' }, false],
    ['create a RoleBinding', { verb: 'create', group: 'rbac.authorization.k8s.io', resource: 'rolebindings', namespace: 'default' }, false],
    // ConfigMaps: BackendTLSPolicy CA bundles, watched; never written
    ['watch ConfigMaps', { verb: 'watch', resource: 'configmaps' }, true],
    ['list ConfigMaps', { verb: 'list', resource: 'configmaps' }, true],
    ['update a ConfigMap', { verb: 'update', resource: 'configmaps', namespace: 'default', name: 'ca' }, false],
    ['change an Ingress spec', { verb: 'update', group: 'networking.k8s.io', resource: 'ingresses', namespace: 'default' }, false],
    ['create pods', { verb: 'create', resource: 'pods', namespace: 'default' }, false],
    ['change a Service spec', { verb: 'patch', resource: 'services', namespace: 'default' }, false],
    // the finalizer tuna.dev/reservation: patch on the objects (metadata.finalizers), update on their finalizers
    ['patch a Domain (its finalizers)', { verb: 'patch', group: 'tuna.dev', resource: 'domains', namespace: 'default' }, true],
    ['update the finalizers of a TCPPort', { verb: 'update', group: 'tuna.dev', resource: 'tcpports', subresource: 'finalizers', namespace: 'default' }, true],
    ['update the finalizers of a Tunnel', { verb: 'update', group: 'tuna.dev', resource: 'tunnels', subresource: 'finalizers', namespace: 'default' }, true],
    ['replace a Domain', { verb: 'update', group: 'tuna.dev', resource: 'domains', namespace: 'default' }, false],
    ['delete a Tunnel', { verb: 'delete', group: 'tuna.dev', resource: 'tunnels', namespace: 'default' }, false],
    ['create a TCPPort', { verb: 'create', group: 'tuna.dev', resource: 'tcpports', namespace: 'default' }, false],
    // GatewayParameters: read, never written (tuna writes no status to it)
    ['watch GatewayParameters', { verb: 'watch', group: 'tuna.dev', resource: 'gatewayparameters' }, true],
    ['update a GatewayParameters', { verb: 'update', group: 'tuna.dev', resource: 'gatewayparameters', namespace: 'default' }, false],
  ] as const) {
    it(`${allowed ? 'may' : 'may not'} ${what}`, async () => {
      const review = await admin.makeApiClient(AuthorizationV1Api).createSubjectAccessReview({ body: { spec: { user: SUBJECT, groups: ['system:serviceaccounts', 'system:serviceaccounts:tuna-system', 'system:authenticated'], resourceAttributes: attributes } } });
      expect(review.status?.allowed === true).to.equal(allowed);
    });
  }
});
