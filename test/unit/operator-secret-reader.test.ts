/**
 * The operator's Secrets (src/operator/secret-reader.ts, accepted-certificates.ts): read by name,
 * only those the objects reference; absent on 404, reported once and absent on 403; a copy kept
 * over a passing failure; a rotation found by the refresh causes a sync; and the data plane's
 * certificate source holds only Secrets the translators accepted.
 */
import { expect } from 'chai';
import type { KubernetesObject, V1Secret } from '@kubernetes/client-node';
import { DataPlane, StaticEndpointResolver } from '../../src/dataplane/index.js';
import type { SecretRef } from '../../src/model/index.js';
import { AcceptedCertificates, Operator, SecretReadError, SecretReader } from '../../src/operator/index.js';
import type { ObjectSource, SecretGetter, SyncResult } from '../../src/operator/index.js';
import { RecordingTunnels } from '../support/operator-fakes.js';
import { selfSignedCertificate } from '../support/tunnel-certs.js';
import type { TestCertificate } from '../support/tunnel-certs.js';
import { ListedObjects } from '../support/operator-fakes.js';

const GW = 'gateway.networking.k8s.io/v1';

/** FakeSecrets answers GETs from a map (by namespace/name), or with the error set for a name; it records every GET. */
class FakeSecrets implements SecretGetter {
  secrets = new Map<string, V1Secret>();
  errors = new Map<string, { code: number }>();
  gets: string[] = [];

  get(ref: SecretRef): Promise<V1Secret | undefined> {
    const key = `${ref.namespace}/${ref.name}`;
    this.gets.push(key);
    const err = this.errors.get(key);
    if (err) return Promise.reject(Object.assign(new Error(`HTTP-Code: ${err.code}`), err));
    return Promise.resolve(this.secrets.get(key));
  }

  put(namespace: string, name: string, pair: TestCertificate, resourceVersion: string): void {
    const b64 = (s: string): string => Buffer.from(s).toString('base64');
    this.secrets.set(`${namespace}/${name}`, {
      metadata: { name, namespace, resourceVersion, uid: `uid-${name}` },
      type: 'kubernetes.io/tls',
      data: { 'tls.crt': b64(pair.cert), 'tls.key': b64(pair.key) },
    });
  }
}

describe('SecretReader', () => {
  let pair: TestCertificate;
  let fake: FakeSecrets;
  let problems: string[];
  let reader: SecretReader;

  before(() => {
    pair = selfSignedCertificate(['shop.example.com']);
  });
  beforeEach(() => {
    fake = new FakeSecrets();
    problems = [];
    reader = new SecretReader(fake, { refreshMs: 0, onProblem: (line) => problems.push(line) });
  });
  afterEach(() => reader.stop());

  it('GETs exactly the Secrets named, returns those that exist stamped v1 Secret, and treats 404 as absent', async () => {
    fake.put('infra', 'cert', pair, '1');
    const read = await reader.read([{ namespace: 'infra', name: 'cert' }, { namespace: 'infra', name: 'missing' }]);
    expect(fake.gets).to.deep.equal(['infra/cert', 'infra/missing']);
    expect(read.map((s) => [s.apiVersion, s.kind, s.metadata?.namespace, s.metadata?.name])).to.deep.equal([['v1', 'Secret', 'infra', 'cert']]);
    expect(problems).to.deep.equal([]);
  });

  it('reports a forbidden Secret once (until it is readable again), without data, and treats it as absent', async () => {
    fake.put('other', 'cert', pair, '1');
    fake.errors.set('other/cert', { code: 403 });
    const refs = [{ namespace: 'other', name: 'cert' }];
    expect(await reader.read(refs)).to.deep.equal([]);
    expect(await reader.read(refs)).to.deep.equal([]);
    expect(problems).to.have.length(1);
    expect(problems[0]).to.match(/^Secret other\/cert may not be read \(403 Forbidden\)/).and.include('get on secrets');
    fake.errors.delete('other/cert');
    expect(await reader.read(refs)).to.have.length(1);
    fake.errors.set('other/cert', { code: 403 });
    await reader.read(refs);
    expect(problems).to.have.length(2);
    expect(problems.join('\n')).to.not.include(Buffer.from(pair.key).toString('base64').slice(0, 20));
  });

  it('keeps the copy read before over a failed read, and fails with SecretReadError when it has none', async () => {
    fake.put('infra', 'cert', pair, '1');
    const refs = [{ namespace: 'infra', name: 'cert' }];
    await reader.read(refs);
    fake.errors.set('infra/cert', { code: 500 });
    const kept = await reader.read(refs);
    expect(kept.map((s) => s.metadata?.resourceVersion)).to.deep.equal(['1']);
    expect(problems).to.deep.equal(['Secret infra/cert could not be read (HTTP 500); serving the copy read before']);
    const fresh = new SecretReader(fake, { refreshMs: 0 });
    let failure: unknown;
    await fresh.read(refs).catch((err: unknown) => (failure = err));
    expect(failure).to.be.instanceOf(SecretReadError);
    expect(failure).to.include({ code: 'TUNA_SECRET_READ' });
  });

  it('calls onChange when a refresh finds a Secret rotated, created or deleted, and not when nothing changed', async () => {
    let changes = 0;
    reader.onChange(() => changes++);
    fake.put('infra', 'cert', pair, '1');
    await reader.read([{ namespace: 'infra', name: 'cert' }, { namespace: 'infra', name: 'later' }]);
    await reader.refresh();
    expect(changes).to.equal(0);
    fake.put('infra', 'cert', pair, '2');
    await reader.refresh();
    expect(changes).to.equal(1);
    await reader.read([{ namespace: 'infra', name: 'cert' }, { namespace: 'infra', name: 'later' }]);
    fake.put('infra', 'later', pair, '7');
    await reader.refresh();
    expect(changes).to.equal(2);
  });

  it('refreshes on its own every refreshMs while it follows a Secret', async () => {
    const timed = new SecretReader(fake, { refreshMs: 20 });
    try {
      fake.put('infra', 'cert', pair, '1');
      await timed.read([{ namespace: 'infra', name: 'cert' }]);
      const changed = new Promise<void>((resolve) => timed.onChange(resolve));
      fake.put('infra', 'cert', pair, '2');
      await changed;
      expect(fake.gets.length).to.be.greaterThan(1);
    } finally {
      await timed.stop();
    }
  });
});


describe('operator: Secrets of HTTPS listeners', () => {
  let pair: TestCertificate;
  let rotated: TestCertificate;
  let other: TestCertificate;

  before(() => {
    pair = selfSignedCertificate(['shop.example.com']);
    rotated = selfSignedCertificate(['shop.example.com']);
    other = selfSignedCertificate(['other.example.com']);
  });

  const listener = (name: string, ref: Record<string, unknown>) => ({ name, port: 443, protocol: 'HTTPS', hostname: `${name}.example.com`, tls: { certificateRefs: [ref] } });
  const objectsWith = (...listeners: unknown[]): KubernetesObject[] =>
    [
      { apiVersion: GW, kind: 'GatewayClass', metadata: { name: 'tuna', uid: 'c', generation: 1 }, spec: { controllerName: 'tuna.dev/gateway-controller' } },
      { apiVersion: GW, kind: 'Gateway', metadata: { name: 'gw', namespace: 'infra', uid: 'g', generation: 1 }, spec: { gatewayClassName: 'tuna', listeners } },
    ] as unknown as KubernetesObject[];
  const resolvedRefs = (result: SyncResult, name: string) => {
    const status = result.state.statuses.find((s) => s.ref.kind === 'Gateway')?.status as { listeners: { name: string; conditions: { type: string; status: string; reason: string; message: string }[] }[] };
    return status.listeners.find((l) => l.name === name)?.conditions.find((c) => c.type === 'ResolvedRefs');
  };

  function operatorOver(objects: ObjectSource, fake: FakeSecrets) {
    const endpoints = new StaticEndpointResolver();
    const certificates = new AcceptedCertificates();
    const secrets = new SecretReader(fake, { refreshMs: 0 });
    const synced: ((result: SyncResult) => void)[] = [];
    const operator = new Operator({
      objects,
      dataPlane: new DataPlane({ endpoints, certificates }),
      endpoints,
      tunnels: new RecordingTunnels(),
      secrets,
      certificates,
      onSynced: (result) => synced.shift()?.(result),
    });
    const nextSync = (): Promise<SyncResult> => new Promise((resolve) => synced.push(resolve));
    return { operator, certificates, secrets, nextSync };
  }

  it('reads the referenced Secrets by name, feeds the data plane only the accepted ones, and reports the others', async () => {
    const fake = new FakeSecrets();
    fake.put('infra', 'good', pair, '1');
    fake.put('infra', 'mismatched', { cert: pair.cert, key: other.key }, '1');
    fake.put('elsewhere', 'ungranted', pair, '1');
    const objects = new ListedObjects();
    objects.items = objectsWith(
      listener('good', { name: 'good' }),
      listener('mismatched', { name: 'mismatched' }),
      listener('missing', { name: 'missing' }),
      listener('ungranted', { name: 'ungranted', namespace: 'elsewhere' }),
    );
    const { operator, certificates } = operatorOver(objects, fake);
    try {
      const result = await operator.start();
      expect(fake.gets.sort(), 'no GET for a reference no grant permits').to.deep.equal(['infra/good', 'infra/mismatched', 'infra/missing']);
      expect(certificates.names()).to.deep.equal(['infra/good']);
      expect(certificates.get({ namespace: 'infra', name: 'good' })).to.deep.equal(pair);
      expect(resolvedRefs(result, 'good')).to.include({ status: 'True' });
      expect(resolvedRefs(result, 'mismatched')).to.include({ status: 'False', reason: 'InvalidCertificateRef', message: 'certificateRef infra/mismatched is not a usable certificate: tls.key is not the private key of the certificate in tls.crt' });
      expect(resolvedRefs(result, 'missing')).to.include({ status: 'False', reason: 'InvalidCertificateRef', message: 'certificateRef infra/missing does not exist' });
      expect(resolvedRefs(result, 'ungranted')).to.include({ status: 'False', reason: 'RefNotPermitted' });
      expect(JSON.stringify(result.state.statuses)).to.not.include('PRIVATE KEY');
    } finally {
      await operator.stop();
    }
  });

  it('reads the client certificate a Gateway presents to its TLS backends and hands it to the data plane', async () => {
    const fake = new FakeSecrets();
    fake.put('infra', 'client', pair, '1');
    const objects = new ListedObjects();
    const gatewayObjects = objectsWith({ name: 'http', port: 80, protocol: 'HTTP' }) as unknown as { spec: Record<string, unknown> }[];
    gatewayObjects[1]!.spec.tls = { backend: { clientCertificateRef: { name: 'client' } } };
    objects.items = [
      ...(gatewayObjects as unknown as KubernetesObject[]),
      { apiVersion: GW, kind: 'HTTPRoute', metadata: { name: 'r', namespace: 'infra', uid: 'r', generation: 1 }, spec: { parentRefs: [{ name: 'gw' }], rules: [{ backendRefs: [{ name: 'svc', port: 443 }] }] } },
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'svc', namespace: 'infra', uid: 's' }, spec: { ports: [{ name: 'https', port: 443 }] } },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ca', namespace: 'infra', uid: 'cm' }, data: { 'ca.crt': other.cert } },
      { apiVersion: GW, kind: 'BackendTLSPolicy', metadata: { name: 'p', namespace: 'infra', uid: 'p', generation: 1 }, spec: { targetRefs: [{ group: '', kind: 'Service', name: 'svc' }], validation: { caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'ca' }], hostname: 'svc.internal' } } },
    ] as unknown as KubernetesObject[];
    const { operator, certificates } = operatorOver(objects, fake);
    try {
      const result = await operator.start();
      expect(fake.gets).to.deep.equal(['infra/client']);
      expect(certificates.names()).to.deep.equal(['infra/client']);
      const backend = result.state.graph.virtualHosts.flatMap((v) => v.routes).flatMap((r) => r.backends)[0];
      expect(backend?.kind === 'service' ? backend.tls?.clientCertificate : undefined).to.deep.equal({ namespace: 'infra', name: 'client' });
      const gw = result.state.statuses.find((st) => st.ref.kind === 'Gateway')?.status as { conditions: { type: string; status: string }[] };
      expect(gw.conditions.find((c) => c.type === 'ResolvedRefs')).to.include({ status: 'True' });
      expect(JSON.stringify(result.state.graph)).to.not.include('PRIVATE KEY');
    } finally {
      await operator.stop();
    }
  });

  it('serves a rotated certificate after the refresh finds it, and drops a Secret no listener names any more', async () => {
    const fake = new FakeSecrets();
    fake.put('infra', 'good', pair, '1');
    const objects = new ListedObjects();
    objects.items = objectsWith(listener('good', { name: 'good' }));
    const { operator, certificates, secrets, nextSync } = operatorOver(objects, fake);
    try {
      await operator.start();
      expect(certificates.get({ namespace: 'infra', name: 'good' })).to.deep.equal(pair);
      const synced = nextSync();
      fake.put('infra', 'good', rotated, '2');
      await secrets.refresh(); // what the timer does every refreshMs: it finds resourceVersion 2
      expect((await synced).state.graph.listeners).to.have.length(1);
      expect(certificates.get({ namespace: 'infra', name: 'good' })).to.deep.equal(rotated);
      objects.items = objectsWith({ name: 'http', port: 80, protocol: 'HTTP' });
      await operator.sync();
      expect(certificates.names()).to.deep.equal([]);
    } finally {
      await operator.stop();
    }
  });
});
