/**
 * The tuna.dev/v1alpha1 codecs: what they accept, what they refuse and the error path they print.
 */
import { expect } from 'chai';
import { closedObject, decodeWith } from '../../src/codec/index.js';
import { decodeDomain, decodeGatewayParameters, decodeRoutePolicy, decodeTCPPort, decodeTunnel, portNumberCodec } from '../../src/crd/index.js';

const meta = { name: 'x', namespace: 'ns' };
const domain = (spec: unknown): unknown => ({ apiVersion: 'tuna.dev/v1alpha1', kind: 'Domain', metadata: meta, spec });
const tcpPort = (spec: unknown): unknown => ({ apiVersion: 'tuna.dev/v1alpha1', kind: 'TCPPort', metadata: meta, spec });
const tunnel = (spec: unknown): unknown => ({ apiVersion: 'tuna.dev/v1alpha1', kind: 'Tunnel', metadata: meta, spec });
const web = { name: 'web', port: 80 };

function errorsOf(result: { ok: boolean; errors?: string[] }): string[] {
  expect(result.ok, 'expected the decode to fail').to.equal(false);
  return result.errors ?? [];
}

describe('Domain codec', () => {
  it('accepts a subdomain and leaves reclaimPolicy absent for the default', () => {
    const result = decodeDomain(domain({ subdomain: 'shop' }));
    expect(result.ok).to.equal(true);
    if (result.ok) expect(result.value.spec).to.deep.equal({ subdomain: 'shop' });
  });

  it('accepts a custom domain with reclaimPolicy Retain', () => {
    const result = decodeDomain(domain({ customDomain: 'shop.example.com', reclaimPolicy: 'Retain' }));
    expect(result.ok).to.equal(true);
    if (result.ok) expect(result.value.spec.reclaimPolicy).to.equal('Retain');
  });

  for (const [title, spec] of [
    ['both subdomain and customDomain', { subdomain: 'a', customDomain: 'a.example.com' }],
    ['neither subdomain nor customDomain', { reclaimPolicy: 'Delete' }],
  ] as const) {
    it(`refuses ${title} with "exactly one of"`, () => {
      expect(errorsOf(decodeDomain(domain(spec)))).to.deep.equal(['spec: exactly one of subdomain or customDomain is required']);
    });
  }

  it('refuses an unknown reclaimPolicy, naming the allowed values', () => {
    expect(errorsOf(decodeDomain(domain({ subdomain: 'a', reclaimPolicy: 'Keep' })))).to.deep.equal([
      'spec.reclaimPolicy: expected "Delete" | "Retain"',
    ]);
  });

  it('refuses a misspelt field instead of falling back to the default reclaimPolicy', () => {
    expect(errorsOf(decodeDomain(domain({ subdomain: 'a', reclaimpolicy: 'Retain' })))).to.deep.equal(['spec.reclaimpolicy: unknown field']);
  });

  it('refuses an empty subdomain', () => {
    expect(errorsOf(decodeDomain(domain({ subdomain: '' })))).to.deep.equal(['spec.subdomain: expected a non-empty string']);
  });
});

describe('TCPPort codec', () => {
  it('accepts an empty spec (any port from the pool)', () => {
    const result = decodeTCPPort(tcpPort({}));
    expect(result.ok).to.equal(true);
    if (result.ok) expect(result.value.spec.port).to.equal(undefined);
  });

  it('treats port: null as absent, as the API server does', () => {
    const result = decodeTCPPort(tcpPort({ port: null }));
    expect(result.ok).to.equal(true);
    if (result.ok) expect(result.value.spec).to.deep.equal({});
  });

  for (const port of [0, -1, 65536, 70000, 22.5, '22']) {
    it(`refuses port ${JSON.stringify(port)} with the allowed range`, () => {
      expect(errorsOf(decodeTCPPort(tcpPort({ port })))).to.deep.equal(['spec.port: expected integer 1-65535']);
    });
  }

  for (const port of [1, 5432, 65535]) {
    it(`accepts port ${port}`, () => {
      expect(decodeTCPPort(tcpPort({ port })).ok).to.equal(true);
    });
  }

  it('refuses a missing spec', () => {
    const { spec: _spec, ...rest } = tcpPort({}) as Record<string, unknown>;
    expect(errorsOf(decodeTCPPort(rest))).to.deep.equal(['spec: required field is missing']);
  });
});

describe('Tunnel codec', () => {
  it('accepts an http Tunnel with a port name and a domainRef', () => {
    const result = decodeTunnel(tunnel({ protocol: 'http', service: { name: 'web', port: 'http' }, domainRef: { name: 'shop' } }));
    expect(result.ok).to.equal(true);
    if (result.ok) expect(result.value.spec.service.port).to.equal('http');
  });

  it('accepts a tcp Tunnel with a tcpPortRef', () => {
    expect(decodeTunnel(tunnel({ protocol: 'tcp', service: web, tcpPortRef: { name: 'pg' } })).ok).to.equal(true);
  });

  it('prints the path of a Service port of the wrong type', () => {
    expect(errorsOf(decodeTunnel(tunnel({ protocol: 'http', service: { name: 'web', port: true } })))).to.deep.equal([
      'spec.service.port: expected number or string',
    ]);
  });

  it('refuses a Service port number out of range', () => {
    expect(errorsOf(decodeTunnel(tunnel({ protocol: 'http', service: { name: 'web', port: 0 } })))).to.deep.equal([
      'spec.service.port: expected integer 1-65535',
    ]);
  });

  it('refuses a Service port name that is not an IANA service name', () => {
    const errors = errorsOf(decodeTunnel(tunnel({ protocol: 'http', service: { name: 'web', port: 'HTTP_8080' } })));
    expect(errors).to.have.length(1);
    expect(errors[0]).to.match(/^spec\.service\.port: expected a port name/);
  });

  it('refuses spec.service.namespace: a Tunnel publishes only its own namespace', () => {
    expect(errorsOf(decodeTunnel(tunnel({ protocol: 'http', service: { ...web, namespace: 'finance' } })))).to.deep.equal([
      'spec.service.namespace: unknown field',
    ]);
  });

  it('refuses a namespace in domainRef as well', () => {
    expect(errorsOf(decodeTunnel(tunnel({ protocol: 'http', service: web, domainRef: { name: 'd', namespace: 'other' } })))).to.deep.equal([
      'spec.domainRef.namespace: unknown field',
    ]);
  });

  it('refuses an unknown protocol, naming the allowed ones', () => {
    expect(errorsOf(decodeTunnel(tunnel({ protocol: 'udp', service: web })))).to.deep.equal(['spec.protocol: expected "http" | "tcp" | "tls"']);
  });

  it('refuses a tcpPortRef on an http Tunnel', () => {
    expect(errorsOf(decodeTunnel(tunnel({ protocol: 'http', service: web, tcpPortRef: { name: 'pg' } })))).to.deep.equal([
      'spec.tcpPortRef: only a tcp Tunnel takes a tcpPortRef (protocol is http)',
    ]);
  });

  it('refuses a domainRef on a tcp Tunnel', () => {
    expect(errorsOf(decodeTunnel(tunnel({ protocol: 'tcp', service: web, domainRef: { name: 'd' } })))).to.deep.equal([
      'spec.domainRef: a tcp Tunnel has no hostname: use tcpPortRef, not domainRef',
    ]);
  });

  it('reports every problem at once, sorted by path', () => {
    expect(errorsOf(decodeTunnel(tunnel({ protocol: 'quic', service: { port: [] }, extra: 1 })))).to.deep.equal([
      'spec.extra: unknown field',
      'spec.protocol: expected "http" | "tcp" | "tls"',
      'spec.service.name: required field is missing',
      'spec.service.port: expected number or string',
    ]);
  });
});

describe('resource envelope', () => {
  it('refuses another apiVersion and a kind that does not match', () => {
    const obj = { apiVersion: 'tuna.dev/v1', kind: 'Domain', metadata: meta, spec: { subdomain: 'a' } };
    expect(errorsOf(decodeDomain(obj))).to.deep.equal(['apiVersion: expected "tuna.dev/v1alpha1"']);
    expect(errorsOf(decodeTunnel(domain({ subdomain: 'a' })))).to.include('kind: expected "Tunnel"');
  });

  it('refuses metadata without a name', () => {
    expect(errorsOf(decodeDomain({ ...(domain({ subdomain: 'a' }) as object), metadata: { namespace: 'ns' } }))).to.deep.equal([
      'metadata.name: expected a non-empty string',
    ]);
  });

  it('accepts informer objects whose creationTimestamp is a Date, and keeps other metadata and status', () => {
    const created = new Date('2026-01-01T00:00:00Z');
    const obj = { ...(domain({ subdomain: 'a' }) as object), metadata: { ...meta, creationTimestamp: created, uid: 'u1' }, status: { hostname: 'old' } };
    const result = decodeDomain(obj);
    expect(result.ok).to.equal(true);
    if (result.ok) {
      expect(result.value.metadata.creationTimestamp).to.equal(created);
      expect(result.value.metadata.uid).to.equal('u1');
      expect(result.value.status).to.deep.equal({ hostname: 'old' });
    }
  });

  it('refuses a non-object', () => {
    expect(decodeTunnel('Tunnel').ok).to.equal(false);
    expect(decodeTunnel(null).ok).to.equal(false);
  });
});

describe('closedObject', () => {
  const codec = closedObject('Pair', { a: portNumberCodec }, { b: portNumberCodec });

  it('is() agrees with decoding about unknown keys', () => {
    expect(codec.is({ a: 1 })).to.equal(true);
    expect(codec.is({ a: 1, c: 2 })).to.equal(false);
  });

  it('drops nothing silently: an unknown key fails even when every known key is valid', () => {
    expect(decodeWith(codec, { a: 1, b: 2, c: 3 })).to.deep.equal({ ok: false, errors: ['c: unknown field'] });
  });

  it('refuses an array where an object is expected', () => {
    expect(decodeWith(codec, [1])).to.deep.equal({ ok: false, errors: ['expected Pair'] });
  });
});

describe('RoutePolicy codec', () => {
  const routePolicy = (spec: unknown): unknown => ({ apiVersion: 'tuna.dev/v1alpha1', kind: 'RoutePolicy', metadata: meta, spec });

  it('accepts targetRefs with a sectionName and every policy field', () => {
    const spec = {
      targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw', sectionName: 'http' }],
      basicAuth: { secretRef: { name: 'users' }, realm: 'r' },
      keyAuth: { header: 'X-Key', secretRef: { name: 'keys' } },
      ipAccess: { allow: ['10.0.0.0/8'], deny: [] },
      rateLimit: { requests: 1, periodSeconds: 1, burst: 2 },
      httpsRedirect: { statusCode: 301, port: 8443 },
      requestHeaders: { set: [{ name: 'a', value: 'b' }], add: [], remove: ['c'] },
      responseHeaders: { add: [{ name: 'd', value: 'e' }] },
      maxBodyBytes: 10,
      cors: { allowOrigins: ['*'], allowCredentials: false, maxAgeSeconds: 5 },
      timeout: '30s',
    };
    const result = decodeRoutePolicy(routePolicy(spec));
    expect(result.ok).to.equal(true);
    if (result.ok) expect(result.value.spec).to.deep.equal(spec);
  });

  it('refuses an unknown field, a secretRef without a name and a targetRef without a kind, naming each', () => {
    expect(errorsOf(decodeRoutePolicy(routePolicy({ rateLimt: {} })))).to.deep.equal(['spec.rateLimt: unknown field']);
    expect(errorsOf(decodeRoutePolicy(routePolicy({ basicAuth: { secretRef: {} } }))).join('\n')).to.contain('spec.basicAuth.secretRef.name');
    expect(errorsOf(decodeRoutePolicy(routePolicy({ targetRefs: [{ group: '', name: 'x' }] }))).join('\n')).to.contain('spec.targetRefs[0].kind');
  });
});

describe('GatewayParameters codec: dataPlane and deployment', () => {
  const params = (spec: unknown): unknown => ({ apiVersion: 'tuna.dev/v1alpha1', kind: 'GatewayParameters', metadata: meta, spec });
  const deployment = {
    replicas: 2,
    resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '0.5Gi', 'ephemeral-storage': '1e9' } },
    nodeSelector: { pool: 'edge-facing', 'topology.kubernetes.io/zone': 'a' },
    tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'gateways', effect: 'NoSchedule' }, { operator: 'Exists', tolerationSeconds: 30 }],
  };

  it('accepts Dedicated with a whole deployment block, and Shared or nothing without one', () => {
    expect(decodeGatewayParameters(params({ dataPlane: 'Dedicated', deployment }))).to.deep.include({ ok: true });
    expect(decodeGatewayParameters(params({ dataPlane: 'Shared' }))).to.deep.include({ ok: true });
    expect(decodeGatewayParameters(params({ deployment: { replicas: 1 } }))).to.deep.include({ ok: true });
  });

  it('refuses an unknown dataPlane, naming the allowed values', () => {
    expect(errorsOf(decodeGatewayParameters(params({ dataPlane: 'Own' })))).to.deep.equal(['spec.dataPlane: expected "Shared" | "Dedicated"']);
  });

  it('refuses a deployment beside an explicit dataPlane Shared', () => {
    expect(errorsOf(decodeGatewayParameters(params({ dataPlane: 'Shared', deployment: { replicas: 1 } })))).to.deep.equal(['spec.deployment: deployment applies to dataPlane Dedicated only']);
  });

  it('names each bad field of the deployment block', () => {
    const bad = {
      replicas: 0,
      resources: { requests: { cpu: 'lots' }, limits: { gpu: '1' } },
      nodeSelector: { 'bad key!': 'a', pool: 'x'.repeat(64) },
      tolerations: [{ operator: 'Maybe', effect: 'Never', tolerationSeconds: -1 }],
      extra: true,
    };
    expect(errorsOf(decodeGatewayParameters(params({ dataPlane: 'Dedicated', deployment: bad })))).to.have.members([
      'spec.deployment.extra: unknown field',
      'spec.deployment.replicas: expected integer 1-32',
      'spec.deployment.resources.requests.cpu: expected a quantity (as 100m, 0.5, 128Mi)',
      'spec.deployment.resources.limits.gpu: unknown field',
      'spec.deployment.nodeSelector.bad key!: expected a label key',
      'spec.deployment.nodeSelector.pool: expected a label value (at most 63 characters)',
      'spec.deployment.tolerations[0].operator: expected "Exists" | "Equal"',
      'spec.deployment.tolerations[0].effect: expected "NoSchedule" | "PreferNoSchedule" | "NoExecute"',
      'spec.deployment.tolerations[0].tolerationSeconds: expected integer 0-2147483647',
    ]);
  });

  it('bounds the tolerations and the node selector', () => {
    const many = Array.from({ length: 33 }, () => ({ operator: 'Exists' }));
    expect(errorsOf(decodeGatewayParameters(params({ dataPlane: 'Dedicated', deployment: { tolerations: many } })))).to.deep.equal(['spec.deployment.tolerations: expected at most 32 tolerations']);
    const selector = Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, 'v']));
    expect(errorsOf(decodeGatewayParameters(params({ dataPlane: 'Dedicated', deployment: { nodeSelector: selector } })))).to.deep.equal(['spec.deployment.nodeSelector: expected at most 32 entries']);
  });
});
