import { expect } from 'chai';
import { request as httpRequest } from 'node:http';
import type { KubernetesObject, V1Secret } from '@kubernetes/client-node';
import { ControlClient } from '../../src/control-api/index.js';
import { openSqliteStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';
import type { SecretRef } from '../../src/model/index.js';
import { AcceptedCertificates, SecretReader } from '../../src/operator/index.js';
import type { SecretGetter , Operator} from '../../src/operator/index.js';
import { startSlowPathBackend } from '../support/backend-servers.js';
import type { EchoReply, TestBackend } from '../support/backend-servers.js';
import { BASE_DOMAIN, seedAccount, startStoreEdge, storeEdgeConfig } from '../support/edge-store-harness.js';
import { wireOperator } from '../support/operator-wiring.js';
import type { StoreEdge } from '../support/edge-store-harness.js';
import { ListedObjects } from '../support/operator-fakes.js';
import { TEST_AUDIENCE, TEST_ISSUER, signToken, testSigner } from '../support/jwt-keys.js';

// tuna.dev RoutePolicy through the operator: a policy with basic auth on an HTTPRoute (by
// targetRefs), one on an Ingress, and one with key auth on one HTTPRoute rule by an ExtensionRef
// filter. The Secrets are read by name (SecretReader); the data plane on the operator applies the
// policies to requests that came through a real store-mode edge on loopback.
const GW = 'gateway.networking.k8s.io/v1';
const ADDRESS_PORT = 18094;
const obj = (o: Record<string, unknown>): KubernetesObject => o as KubernetesObject;
// bcrypt of "s3cret" (cost 4), as `htpasswd -B` writes it
const BCRYPT = '$2y$04$UiCeP5Fy12j6KdPEixFvoOng0nkjmfp6VK2dYIXLO0puDpyO3MPzS';

/** ClusterSecrets answers the reader's GETs as an apiserver would. */
class ClusterSecrets implements SecretGetter {
  readonly secrets = new Map<string, V1Secret>();
  get(ref: SecretRef): Promise<V1Secret | undefined> {
    return Promise.resolve(this.secrets.get(`${ref.namespace}/${ref.name}`));
  }
}

function policy(name: string, spec: Record<string, unknown>): KubernetesObject {
  return obj({ apiVersion: 'tuna.dev/v1alpha1', kind: 'RoutePolicy', metadata: { name, namespace: 'shop', uid: `uid-${name}`, generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' }, spec });
}

/** TRAFFIC is a RoutePolicy spec per Ingress, for the policies other than authentication. */
const TRAFFIC: Record<string, Record<string, unknown>> = {
  limited: { rateLimit: { requests: 2, periodSeconds: 60, burst: 2 } },
  private: { ipAccess: { deny: ['127.0.0.0/8'] } },
  secure: { httpsRedirect: {} },
  small: { maxBodyBytes: 10 },
  shared: { cors: { allowOrigins: ['https://app.example'], allowMethods: ['GET', 'PUT'] }, responseHeaders: { set: [{ name: 'X-Served-By', value: 'tuna' }] } },
  slow: { timeout: '1s' },
};

// JWT key sets: the identity provider's public key (made fresh each run) in a Secret and in a
// ConfigMap; a Secret whose key set is not JSON; a loopback URL nothing answers at (port 1).
const SIGNER = testSigner('idp-1', 'ES256');
const JWKS_TEXT = JSON.stringify({ keys: [SIGNER.jwk] });
const jwtSpec = (jwks: Record<string, unknown>): Record<string, unknown> => ({ jwt: { issuers: [TEST_ISSUER], audiences: [TEST_AUDIENCE], jwks, claimToHeaders: [{ claim: 'sub', header: 'X-User' }] } });
const JWT_POLICIES: Record<string, Record<string, unknown>> = {
  'jwt-secret': jwtSpec({ secretRef: { name: 'idp-jwks' } }),
  'jwt-configmap': jwtSpec({ configMapRef: { name: 'idp-jwks', key: 'keys.json' } }),
  'jwt-bad': jwtSpec({ secretRef: { name: 'bad-jwks' } }),
  'jwt-url': jwtSpec({ url: 'http://127.0.0.1:1/jwks' }),
};

// OIDC logins: a client Secret of type tuna.dev/oidc and a provider nothing answers at (port 1); a policy whose Secret is missing.
const oidcSpec = (secret: string): Record<string, unknown> => ({ oidc: { issuer: 'http://127.0.0.1:1', clientId: 'shop', secretRef: { name: secret }, claimToHeaders: [{ claim: 'sub', header: 'X-User' }] } });
const OIDC_POLICIES: Record<string, Record<string, unknown>> = {
  'oidc-unreachable': oidcSpec('shop-oidc'),
  'oidc-missing': oidcSpec('no-such-oidc'),
};

function ingress(name: string): KubernetesObject {
  return obj({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name, namespace: 'shop', uid: `uid-${name}`, generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' },
    spec: { ingressClassName: 'tuna', rules: [{ host: `${name}.${BASE_DOMAIN}`, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } }] },
  });
}

function objects(backendPort: number): KubernetesObject[] {
  return [
    ...Object.entries(OIDC_POLICIES).flatMap(([name, spec]) => [ingress(name), policy(`${name}-oidc`, { targetRefs: [{ group: 'networking.k8s.io', kind: 'Ingress', name }], ...spec })]),
    ...Object.entries(JWT_POLICIES).flatMap(([name, spec]) => [
      ingress(name),
      policy(`${name}-jwt`, { targetRefs: [{ group: 'networking.k8s.io', kind: 'Ingress', name }], ...spec }),
    ]),
    obj({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'idp-jwks', namespace: 'shop' }, data: { 'keys.json': JWKS_TEXT, other: 'not a key set' } }),
    obj({ apiVersion: GW, kind: 'GatewayClass', metadata: { name: 'tuna', uid: 'uid-class', generation: 1 }, spec: { controllerName: 'tuna.dev/gateway-controller' } }),
    obj({ apiVersion: GW, kind: 'Gateway', metadata: { name: 'gw', namespace: 'shop', uid: 'uid-gw', generation: 1 }, spec: { gatewayClassName: 'tuna', listeners: [{ name: 'web', protocol: 'HTTP', port: ADDRESS_PORT }] } }),
    obj({
      apiVersion: GW,
      kind: 'HTTPRoute',
      metadata: { name: 'store', namespace: 'shop', uid: 'uid-store', generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' },
      spec: {
        parentRefs: [{ name: 'gw' }],
        rules: [
          { backendRefs: [{ name: 'web', port: 80 }] },
          {
            matches: [{ path: { type: 'PathPrefix', value: '/api' } }],
            filters: [{ type: 'ExtensionRef', extensionRef: { group: 'tuna.dev', kind: 'RoutePolicy', name: 'api-keys' } }],
            backendRefs: [{ name: 'web', port: 80 }],
          },
        ],
      },
    }),
    obj({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name: 'blog', namespace: 'shop', uid: 'uid-blog', generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' },
      spec: { ingressClassName: 'tuna', rules: [{ host: `blog.${BASE_DOMAIN}`, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } }] },
    }),
    policy('store-auth', { targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'store' }], basicAuth: { secretRef: { name: 'htpasswd' }, realm: 'Store' } }),
    policy('blog-auth', { targetRefs: [{ group: 'networking.k8s.io', kind: 'Ingress', name: 'blog' }], basicAuth: { secretRef: { name: 'htpasswd' } }, requestHeaders: { set: [{ name: 'X-Policy', value: 'blog' }] } }),
    policy('api-keys', { keyAuth: { header: 'X-Api-Key', secretRef: { name: 'api-keys' } } }),
    // the other policies, one Ingress each
    ...Object.entries(TRAFFIC).flatMap(([name, spec]) => [ingress(name), policy(`${name}-policy`, { targetRefs: [{ group: 'networking.k8s.io', kind: 'Ingress', name }], ...spec })]),
    obj({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'shop' }, spec: { ports: [{ name: 'http', port: 80 }] } }),
    obj({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'web', namespace: 'shop', labels: { 'kubernetes.io/service-name': 'web' } },
      addressType: 'IPv4',
      ports: [{ name: 'http', port: backendPort }],
      endpoints: [{ addresses: ['127.0.0.1'] }],
    }),
  ];
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function get(address: string, port: number, host: string, path: string, headers: Record<string, string> = {}, options: { method?: string; body?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: address, port, path, method: options.method ?? 'GET', headers: { host, ...headers }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/** served retries (bounded, 100 ms apart) until the tunnel is up: the edge answers 503 or 404 before. */
async function served(address: string, port: number, host: string, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  let last: unknown;
  for (let i = 0; i < 100; i++) {
    try {
      const answer = await get(address, port, host, path, headers);
      if (answer.status !== 503 && answer.status !== 404) return answer;
      last = answer.status;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${host}${path} never answered: last ${String(last)}`);
}

const basic = (cred: string): Record<string, string> => ({ authorization: `Basic ${Buffer.from(cred).toString('base64')}` });

describe('operator: tuna.dev RoutePolicy on an HTTPRoute, an Ingress and an ExtensionRef filter', () => {
  let store: Store;
  let running: StoreEdge;
  let backend: TestBackend;
  let operator: Operator;

  beforeEach(async () => {
    store = await openSqliteStore(':memory:');
    running = await startStoreEdge(store, storeEdgeConfig('unused', { addressPorts: [{ port: ADDRESS_PORT, protocol: 'http' }] }));
    const seeded = await seedAccount(store);
    const client = new ControlClient({ url: new URL(`http://127.0.0.1:${running.controlPort}`) }, seeded.reservationsToken);
    // `/slow` answers after 3 s (the `slow` Ingress's policy times out after 1 s); the rest echo
    backend = await startSlowPathBackend('web');
    const listed = new ListedObjects();
    listed.items = objects(backend.port);
    const secrets = new ClusterSecrets();
    secrets.secrets.set('shop/htpasswd', { metadata: { name: 'htpasswd', namespace: 'shop', resourceVersion: '1' }, type: 'Opaque', data: { auth: Buffer.from(`ann:${BCRYPT}\n`).toString('base64') } });
    secrets.secrets.set('shop/idp-jwks', { metadata: { name: 'idp-jwks', namespace: 'shop', resourceVersion: '1' }, type: 'Opaque', data: { 'jwks.json': Buffer.from(JWKS_TEXT).toString('base64') } });
    secrets.secrets.set('shop/bad-jwks', { metadata: { name: 'bad-jwks', namespace: 'shop', resourceVersion: '1' }, type: 'Opaque', data: { 'jwks.json': Buffer.from('{"keys": [ {"kty": "EC",').toString('base64') } });
    secrets.secrets.set('shop/shop-oidc', { metadata: { name: 'shop-oidc', namespace: 'shop', resourceVersion: '1' }, type: 'tuna.dev/oidc', data: { 'client-secret': Buffer.from('op-secret').toString('base64'), 'cookie-secret': Buffer.from(Buffer.alloc(32, 9).toString('base64')).toString('base64') } });
    secrets.secrets.set('shop/api-keys', { metadata: { name: 'api-keys', namespace: 'shop', resourceVersion: '1' }, type: 'tuna.dev/key-auth', data: { ci: Buffer.from('k-ci').toString('base64') } });
    const certificates = new AcceptedCertificates();
    ({ operator } = wireOperator({
      objects: listed,
      edge: running,
      client,
      reconciler: { clusterId: 'east', addressPool: '127.77.0.0/16' },
      certificates,
      options: { secrets: new SecretReader(secrets, { refreshMs: 0 }) },
    }));
  });

  afterEach(async () => {
    await operator.stop();
    await running.edge.close();
    await store.close();
    await backend.close();
  });

  it('asks for basic auth on the HTTPRoute and the Ingress, key auth on the ExtensionRef rule only, and reports every target Accepted', async () => {
    const result = await operator.start();
    const address = result.edge?.addresses.get('binding/address/shop/gw');
    expect(address).to.match(/^127\.77\.\d+\.\d+$/);

    // HTTPRoute by targetRefs: basic auth from the htpasswd Secret
    const anonymous = await served(address!, ADDRESS_PORT, 'store.example', '/');
    expect(anonymous.status).to.equal(401);
    expect(anonymous.headers['www-authenticate']).to.equal('Basic realm="Store", charset="UTF-8"');
    expect((await get(address!, ADDRESS_PORT, 'store.example', '/', basic('ann:wrong'))).status).to.equal(401);
    const ann = await get(address!, ADDRESS_PORT, 'store.example', '/', basic('ann:s3cret'));
    expect(ann.status).to.equal(200);
    expect((JSON.parse(ann.body) as EchoReply).backend).to.equal('web');

    // the ExtensionRef rule: the route's basic auth and the rule's key auth, both must pass
    expect((await get(address!, ADDRESS_PORT, 'store.example', '/api', basic('ann:s3cret'))).status).to.equal(401);
    expect((await get(address!, ADDRESS_PORT, 'store.example', '/api', { ...basic('ann:s3cret'), 'x-api-key': 'wrong' })).status).to.equal(401);
    expect((await get(address!, ADDRESS_PORT, 'store.example', '/api', { ...basic('ann:s3cret'), 'x-api-key': 'k-ci' })).status).to.equal(200);
    // the key is asked on that rule only
    expect((await get(address!, ADDRESS_PORT, 'store.example', '/other', basic('ann:s3cret'))).status).to.equal(200);

    // Ingress by targetRefs: basic auth and a request header
    expect((await served('127.0.0.1', running.httpPort, `blog.${BASE_DOMAIN}`, '/')).status).to.equal(401);
    const blog = await get('127.0.0.1', running.httpPort, `blog.${BASE_DOMAIN}`, '/', basic('ann:s3cret'));
    expect(blog.status).to.equal(200);
    expect((JSON.parse(blog.body) as EchoReply).headers['x-policy']).to.equal('blog');

    const ancestors = (name: string) =>
      (result.state.statuses.find((s) => s.ref.kind === 'RoutePolicy' && s.ref.name === name)?.status?.ancestors as { ancestorRef: { kind: string; name: string }; conditions: { type: string; status: string; reason: string }[] }[]).map((a) => [
        a.ancestorRef.kind,
        a.ancestorRef.name,
        ...a.conditions.map((c) => `${c.type}=${c.status}/${c.reason}`),
      ]);
    expect(ancestors('store-auth')).to.deep.equal([['HTTPRoute', 'store', 'Accepted=True/Accepted', 'ResolvedRefs=True/ResolvedRefs']]);
    expect(ancestors('blog-auth')).to.deep.equal([['Ingress', 'blog', 'Accepted=True/Accepted', 'ResolvedRefs=True/ResolvedRefs']]);
    expect(ancestors('api-keys')).to.deep.equal([['HTTPRoute', 'store', 'Accepted=True/Accepted', 'ResolvedRefs=True/ResolvedRefs']]);
  });

  it('applies a rate limit, an IP deny, an HTTPS redirect, a body limit, CORS with a response header and a timeout, each from its RoutePolicy on an Ingress', async () => {
    const result = await operator.start();
    const at = (name: string, path = '/', headers: Record<string, string> = {}, options: { method?: string; body?: string } = {}) => get('127.0.0.1', running.httpPort, `${name}.${BASE_DOMAIN}`, path, headers, options);
    // rate limit: a burst of 2 from this client address, then 429 with Retry-After
    expect((await served('127.0.0.1', running.httpPort, `limited.${BASE_DOMAIN}`, '/')).status).to.equal(200);
    expect((await at('limited')).status).to.equal(200);
    const limited = await at('limited');
    expect(limited.status).to.equal(429);
    expect(Number(limited.headers['retry-after'])).to.be.greaterThan(0);
    // IP deny of the loopback range: the client address the edge saw
    expect((await served('127.0.0.1', running.httpPort, `private.${BASE_DOMAIN}`, '/')).status).to.equal(403);
    // HTTPS redirect from the public scheme
    const secure = await served('127.0.0.1', running.httpPort, `secure.${BASE_DOMAIN}`, '/a?b=1');
    expect(secure.status).to.equal(308);
    expect(secure.headers.location).to.equal(`https://secure.${BASE_DOMAIN}/a?b=1`);
    // body limit: 10 bytes
    expect((await served('127.0.0.1', running.httpPort, `small.${BASE_DOMAIN}`, '/')).status).to.equal(200);
    expect((await at('small', '/', { 'content-type': 'text/plain' }, { method: 'POST', body: 'x'.repeat(100) })).status).to.equal(413);
    expect((await at('small', '/', { 'content-type': 'text/plain' }, { method: 'POST', body: 'x'.repeat(5) })).status).to.equal(200);
    // CORS: the preflight answered, the origin allowed on responses, and a response header set
    await served('127.0.0.1', running.httpPort, `shared.${BASE_DOMAIN}`, '/');
    const preflight = await at('shared', '/', { origin: 'https://app.example', 'access-control-request-method': 'PUT' }, { method: 'OPTIONS' });
    expect(preflight.status).to.be.oneOf([200, 204]);
    expect(preflight.headers['access-control-allow-origin']).to.equal('https://app.example');
    expect(String(preflight.headers['access-control-allow-methods'])).to.include('PUT');
    const shared = await at('shared', '/', { origin: 'https://app.example' });
    expect([shared.status, shared.headers['access-control-allow-origin'], shared.headers['x-served-by']]).to.deep.equal([200, 'https://app.example', 'tuna']);
    expect((await at('shared', '/', { origin: 'https://evil.example' })).headers['access-control-allow-origin']).to.equal(undefined);
    // timeout: the backend answers after 3 s, the policy gives up after 1 s
    expect((await served('127.0.0.1', running.httpPort, `slow.${BASE_DOMAIN}`, '/')).status).to.equal(200);
    expect((await at('slow', '/slow')).status).to.equal(504);

    const accepted = result.state.statuses.filter((st) => st.ref.kind === 'RoutePolicy' && st.ref.name.endsWith('-policy'));
    expect(accepted.map((st) => (st.status?.ancestors as { conditions: { type: string; status: string }[] }[])[0]?.conditions.map((c) => `${c.type}=${c.status}`).join(','))).to.deep.equal(
      Object.keys(TRAFFIC).map(() => 'Accepted=True,ResolvedRefs=True'),
    );
  });

  it('verifies a JWT with keys from a Secret and from a ConfigMap; a malformed key set is ResolvedRefs=False with a Warning and its route answers 500, an unreachable URL 503, and the other routes serve', async () => {
    const result = await operator.start();
    const at = (name: string, headers: Record<string, string> = {}) => get('127.0.0.1', running.httpPort, `${name}.${BASE_DOMAIN}`, '/', headers);
    const token = await signToken(SIGNER, { sub: 'ann' });
    for (const name of ['jwt-secret', 'jwt-configmap']) {
      const none = await served('127.0.0.1', running.httpPort, `${name}.${BASE_DOMAIN}`, '/');
      expect(none.status, name).to.equal(401);
      expect(none.headers['www-authenticate'], name).to.equal('Bearer realm="Authentication Required"');
      const bad = await at(name, { authorization: `Bearer ${await signToken(testSigner('idp-1', 'ES256'))}` });
      expect([bad.status, bad.headers['www-authenticate']], name).to.deep.equal([401, 'Bearer realm="Authentication Required", error="invalid_token"']);
      const ok = await at(name, { authorization: `Bearer ${token}`, 'x-user': 'root' });
      expect(ok.status, name).to.equal(200);
      expect((JSON.parse(ok.body) as EchoReply).headers['x-user'], name).to.equal('ann');
    }
    // the malformed key set: fail closed on its route; the unreachable URL: 503 with the reason
    expect((await served('127.0.0.1', running.httpPort, `jwt-bad.${BASE_DOMAIN}`, '/')).status).to.equal(500);
    const unreachable = await at('jwt-url', { authorization: `Bearer ${token}` });
    expect(unreachable.status).to.equal(503);
    expect(unreachable.body).to.contain('signing keys could not be fetched');
    // other routes and policies keep serving
    expect((await at('jwt-secret', { authorization: `Bearer ${token}` })).status).to.equal(200);
    expect((await served('127.0.0.1', running.httpPort, `small.${BASE_DOMAIN}`, '/')).status).to.equal(200);

    const statusOf = (name: string) => result.state.statuses.find((st) => st.ref.kind === 'RoutePolicy' && st.ref.name === name);
    const conditions = (name: string) => (statusOf(name)?.status?.ancestors as { conditions: { type: string; status: string; reason: string }[] }[])[0]?.conditions.map((c) => `${c.type}=${c.status}/${c.reason}`);
    for (const name of ['jwt-secret-jwt', 'jwt-configmap-jwt', 'jwt-url-jwt']) expect(conditions(name), name).to.deep.equal(['Accepted=True/Accepted', 'ResolvedRefs=True/ResolvedRefs']);
    expect(conditions('jwt-bad-jwt')).to.deep.equal(['Accepted=False/Invalid', 'ResolvedRefs=False/JWKSInvalid']);
    const events = statusOf('jwt-bad-jwt')?.events ?? [];
    expect(events.map((e) => `${e.type}/${e.reason}`)).to.include('Warning/JWKSInvalid');
    expect(events.map((e) => e.message).join('\n')).to.contain('Secret shop/bad-jwks key jwks.json: not valid JSON');
  });

  it('an OIDC login from a tuna.dev/oidc Secret: 503 with the reason while its provider cannot be reached, 401 for a non-browser client; a missing Secret is ResolvedRefs=False with a Warning and its route answers 500', async () => {
    const result = await operator.start();
    // served waits past 503s and 404s until the route is there: the non-browser 401 shows it is
    const api = await served('127.0.0.1', running.httpPort, `oidc-unreachable.${BASE_DOMAIN}`, '/', { accept: 'application/json' });
    expect([api.status, api.body]).to.deep.equal([401, 'authentication required: sign in with a browser\n']);
    const browser = await get('127.0.0.1', running.httpPort, `oidc-unreachable.${BASE_DOMAIN}`, '/', { accept: 'text/html' });
    expect(browser.status).to.equal(503);
    expect(browser.body).to.contain("the OpenID provider's configuration could not be fetched from http://127.0.0.1:1/.well-known/openid-configuration");
    expect((await served('127.0.0.1', running.httpPort, `oidc-missing.${BASE_DOMAIN}`, '/')).status).to.equal(500);
    expect((await served('127.0.0.1', running.httpPort, `small.${BASE_DOMAIN}`, '/')).status).to.equal(200);

    const statusOf = (name: string) => result.state.statuses.find((st) => st.ref.kind === 'RoutePolicy' && st.ref.name === name);
    const conditions = (name: string) => (statusOf(name)?.status?.ancestors as { conditions: { type: string; status: string; reason: string }[] }[])[0]?.conditions.map((c) => `${c.type}=${c.status}/${c.reason}`);
    expect(conditions('oidc-unreachable-oidc')).to.deep.equal(['Accepted=True/Accepted', 'ResolvedRefs=True/ResolvedRefs']);
    expect(conditions('oidc-missing-oidc')).to.deep.equal(['Accepted=False/Invalid', 'ResolvedRefs=False/OIDCSecretNotFound']);
    const events = statusOf('oidc-missing-oidc')?.events ?? [];
    expect(events.map((e) => `${e.type}/${e.reason}`)).to.include('Warning/OIDCSecretNotFound');
    expect(events.map((e) => e.message).join('\n')).to.contain('spec.oidc.secretRef: Secret shop/no-such-oidc not found');
    expect(JSON.stringify(result.state.statuses)).not.to.contain('op-secret');
  });
});
