// operator-rbac.test.ts — config/rbac/operator.yaml is enough for the operator and no more: with
// its ServiceAccount's token the object cache starts, the status writer writes and the Secret a
// listener names is read by name, and the apiserver denies listing or watching Secrets, writing any
// Secret but its key Secret, spec writes and pods.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { AuthorizationV1Api, CoreV1Api, KubeConfig, KubernetesObjectApi, NetworkingV1Api } from '@kubernetes/client-node';
import type { KubernetesObject } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { translateObjects } from '../../src/agent/state.js';
import { KubeObjects } from '../../src/operator/kube-objects.js';
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

  for (const [what, attributes, allowed] of [
    ['read the kube-system namespace (the cluster id)', { verb: 'get', resource: 'namespaces', name: 'kube-system' }, true],
    ['patch an Ingress status', { verb: 'patch', group: 'networking.k8s.io', resource: 'ingresses', subresource: 'status', namespace: 'default' }, true],
    ['read its key Secret', { verb: 'get', resource: 'secrets', namespace: 'tuna-system', name: 'tuna-tunnel-keys' }, true],
    ['replace its key Secret', { verb: 'update', resource: 'secrets', namespace: 'tuna-system', name: 'tuna-tunnel-keys' }, true],
    ['read a key shard', { verb: 'get', resource: 'secrets', namespace: 'tuna-system', name: 'tuna-tunnel-keys-00' }, true],
    ['replace the last key shard', { verb: 'update', resource: 'secrets', namespace: 'tuna-system', name: 'tuna-tunnel-keys-1f' }, true],
    ['replace a Secret past the shards', { verb: 'update', resource: 'secrets', namespace: 'tuna-system', name: 'tuna-tunnel-keys-20' }, false],
    ['delete a key shard', { verb: 'delete', resource: 'secrets', namespace: 'tuna-system', name: 'tuna-tunnel-keys-00' }, false],
    ['renew its Lease', { verb: 'update', group: 'coordination.k8s.io', resource: 'leases', namespace: 'tuna-system', name: 'tuna-operator' }, true],
    // get by name, anywhere: a certificateRef may name a Secret of any namespace (docs/operator.md)
    ['get, by name, a Secret a listener names', { verb: 'get', resource: 'secrets', namespace: 'default', name: 'shop-cert' }, true],
    ['get, by name, another Secret of its namespace', { verb: 'get', resource: 'secrets', namespace: 'tuna-system', name: 'something-else' }, true],
    ['list Secrets', { verb: 'list', resource: 'secrets' }, false],
    ['list the Secrets of a namespace', { verb: 'list', resource: 'secrets', namespace: 'default' }, false],
    ['watch Secrets', { verb: 'watch', resource: 'secrets' }, false],
    ['watch the Secrets of a namespace', { verb: 'watch', resource: 'secrets', namespace: 'default' }, false],
    ['create a Secret outside its namespace', { verb: 'create', resource: 'secrets', namespace: 'default' }, false],
    ['update a Secret it did not write', { verb: 'update', resource: 'secrets', namespace: 'default', name: 'shop-cert' }, false],
    ['update another Secret of its namespace', { verb: 'update', resource: 'secrets', namespace: 'tuna-system', name: 'something-else' }, false],
    ['patch a Secret', { verb: 'patch', resource: 'secrets', namespace: 'default', name: 'shop-cert' }, false],
    ['delete a Secret', { verb: 'delete', resource: 'secrets', namespace: 'tuna-system', name: 'tuna-tunnel-keys' }, false],
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
