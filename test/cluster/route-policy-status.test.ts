// route-policy-status.test.ts — a RoutePolicy's status as the operator writes it, on a real
// apiserver: its CRD (config/crd) accepts the ancestors[] the translator gives, one per target with
// Accepted and ResolvedRefs, and a bad value is told there (Invalid) while a good policy is Accepted.
// JWT policies take their key sets from ConfigMaps the operator watches: the cache keeps a key set
// (and only that of the ConfigMap's data), a good one is Accepted, a malformed one JWKSInvalid.
// An OIDC policy whose client Secret is missing is ResolvedRefs=False, OIDCSecretNotFound.
import { expect } from 'chai';
import { ApiextensionsV1Api, CoreV1Api, CustomObjectsApi, NetworkingV1Api } from '@kubernetes/client-node';
import { translateObjects } from '../../src/agent/state.js';
import { refKey } from '../../src/model/index.js';
import { KubeObjects } from '../../src/operator/kube-objects.js';
import { StatusWriter, objectLookup } from '../../src/operator/status-writer.js';
import { testSigner } from '../support/jwt-keys.js';
import { clusterConfig, installTunaCrds, waitFor } from './cluster-env.js';

type Ancestor = { ancestorRef: { kind: string; name: string }; controllerName: string; conditions: { type: string; status: string; reason: string; lastTransitionTime: string }[] };

describe('operator: a RoutePolicy’s status on the test cluster', function () {
  this.timeout(120_000);
  const namespace = `tuna-rpol-${process.pid}`;
  let custom: CustomObjectsApi;
  let core: CoreV1Api;
  let objects: KubeObjects;

  before(async () => {
    const config = clusterConfig();
    core = config.makeApiClient(CoreV1Api);
    custom = config.makeApiClient(CustomObjectsApi);
    const crds = config.makeApiClient(ApiextensionsV1Api);
    await installTunaCrds(crds);
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    await core.createNamespacedService({ namespace, body: { metadata: { name: 'web' }, spec: { ports: [{ name: 'http', port: 80 }] } } });
    await config.makeApiClient(NetworkingV1Api).createNamespacedIngress({
      namespace,
      body: { metadata: { name: 'web' }, spec: { ingressClassName: 'tuna', rules: [{ host: `web.${namespace}.test`, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } }] } },
    });
    const target = [{ group: 'networking.k8s.io', kind: 'Ingress', name: 'web' }];
    const keys = JSON.stringify({ keys: [testSigner('idp-1', 'ES256').jwk] });
    await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'idp' }, data: { 'keys.json': keys, 'app.conf': 'x=1' } } });
    await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'idp-bad' }, data: { 'jwks.json': '{"keys": [{"kty": "oct", "k": "c2VjcmV0"}]}' } } });
    const jwt = (configMapRef: Record<string, string>) => ({ issuers: ['https://idp.test'], audiences: ['web'], jwks: { configMapRef }, claimToHeaders: [{ claim: 'sub', header: 'X-User' }], require: [{ claim: 'scope', scope: 'read' }] });
    for (const [policyName, spec] of [
      ['limits', { targetRefs: target, rateLimit: { requests: 10, periodSeconds: 1 } }],
      ['bad-cidr', { targetRefs: target, ipAccess: { allow: ['10.0.0.0/33'] } }],
      ['jwt', { targetRefs: target, jwt: jwt({ name: 'idp', key: 'keys.json' }) }],
      ['jwt-bad', { targetRefs: target, jwt: jwt({ name: 'idp-bad' }) }],
      ['oidc-missing', { targetRefs: target, oidc: { issuer: 'https://idp.test', clientId: 'web', secretRef: { name: 'no-such-oidc' }, scopes: ['email'], sessionLifetime: '1h', claimToHeaders: [{ claim: 'email', header: 'X-Email' }] } }],
    ] as const) {
      await custom.createNamespacedCustomObject({ group: 'tuna.dev', version: 'v1alpha1', namespace, plural: 'routepolicies', body: { apiVersion: 'tuna.dev/v1alpha1', kind: 'RoutePolicy', metadata: { name: policyName }, spec } });
    }
    objects = new KubeObjects(config, { debounceMs: 50, retryMs: 1000 });
    await objects.start();
    await waitFor('the cache to hold the policies', 30_000, async () => (objects.objects().filter((o) => o.kind === 'RoutePolicy' && o.metadata?.namespace === namespace).length === 5 ? true : undefined));
  });

  after(async () => {
    await objects?.stop();
    await core?.deleteNamespace({ name: namespace }).catch(() => undefined);
  });

  it('writes ancestors[] with Accepted and ResolvedRefs, and Invalid for a bad CIDR, which the apiserver keeps', async () => {
    const errors: string[] = [];
    const writer = new StatusWriter(clusterConfig(), { onError: (ref, err) => errors.push(`${refKey(ref)}: ${String(err)}`) });
    const statuses = translateObjects(objects.objects()).statuses.filter((s) => s.ref.namespace === namespace && s.ref.kind === 'RoutePolicy');
    expect(statuses).to.have.length(5);
    await writer.write(statuses, objectLookup(objects.objects()));
    expect(errors).to.deep.equal([]);
    const ancestorsOf = async (name: string) =>
      (((await custom.getNamespacedCustomObjectStatus({ group: 'tuna.dev', version: 'v1alpha1', namespace, plural: 'routepolicies', name })) as { status?: { ancestors?: Ancestor[] } }).status?.ancestors ?? []).map((a) => [
        a.ancestorRef.kind,
        a.ancestorRef.name,
        a.controllerName,
        ...a.conditions.map((c) => `${c.type}=${c.status}/${c.reason}${c.lastTransitionTime ? '' : ' (no time)'}`),
      ]);
    expect(await ancestorsOf('limits')).to.deep.equal([['Ingress', 'web', 'tuna.dev/gateway-controller', 'Accepted=True/Accepted', 'ResolvedRefs=True/ResolvedRefs']]);
    const bad = await ancestorsOf('bad-cidr');
    expect(bad).to.have.length(1);
    expect(bad[0]?.slice(0, 3)).to.deep.equal(['Ingress', 'web', 'tuna.dev/gateway-controller']);
    expect(bad[0]).to.include('Accepted=False/Invalid');
    // JWT: the key set of a watched ConfigMap is kept by the cache (other keys dropped) and accepted
    const cached = objects.objects().find((o) => o.kind === 'ConfigMap' && o.metadata?.namespace === namespace && o.metadata.name === 'idp') as { data?: Record<string, string> } | undefined;
    expect(Object.keys(cached?.data ?? {})).to.deep.equal(['keys.json']);
    expect(await ancestorsOf('jwt')).to.deep.equal([['Ingress', 'web', 'tuna.dev/gateway-controller', 'Accepted=True/Accepted', 'ResolvedRefs=True/ResolvedRefs']]);
    expect(await ancestorsOf('jwt-bad')).to.deep.equal([['Ingress', 'web', 'tuna.dev/gateway-controller', 'Accepted=False/Invalid', 'ResolvedRefs=False/JWKSInvalid']]);
    // OIDC: the CRD takes spec.oidc; a client Secret that is not there is told as OIDCSecretNotFound
    expect(await ancestorsOf('oidc-missing')).to.deep.equal([['Ingress', 'web', 'tuna.dev/gateway-controller', 'Accepted=False/Invalid', 'ResolvedRefs=False/OIDCSecretNotFound']]);
  });
});
