/**
 * checkTlsPair (src/translate/common/tls-pair.ts) and how its verdict reaches a Gateway listener:
 * the snapshot keeps only the problem (never the data), and the listener naming a Secret whose pair
 * is unusable is ResolvedRefs=False with reason InvalidCertificateRef. Certificates are made at test
 * time (openssl, node:crypto); none is committed.
 */
import { expect } from 'chai';
import { generateKeyPairSync } from 'node:crypto';
import { checkTlsPair, snapshotFromObjects, translateSnapshot } from '../../src/translate/index.js';
import { selfSignedCertificate } from '../support/tunnel-certs.js';
import type { TestCertificate } from '../support/tunnel-certs.js';

const GW = 'gateway.networking.k8s.io/v1';

describe('checkTlsPair', () => {
  let pair: TestCertificate;
  let other: TestCertificate;

  before(() => {
    pair = selfSignedCertificate(['shop.example.com']);
    other = selfSignedCertificate(['other.example.com']);
  });

  it('accepts a PEM certificate with its own private key, and a chain whose first certificate matches the key', () => {
    expect(checkTlsPair(pair.cert, pair.key)).to.equal(undefined);
    expect(checkTlsPair(pair.cert + other.cert, pair.key)).to.equal(undefined);
  });

  it('names what is wrong for each kind of unusable pair', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const encrypted = rsa.privateKey.export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'pw' }).toString();
    const cases: [string, string, string, string][] = [
      ['an empty tls.crt', '', pair.key, 'tls.crt is empty'],
      ['a tls.crt without a PEM block', 'just text', pair.key, 'tls.crt holds no PEM certificate (no BEGIN CERTIFICATE block)'],
      ['a key in tls.crt', pair.key, pair.cert, 'tls.crt holds no PEM certificate (no BEGIN CERTIFICATE block)'],
      ['a PEM block that is not a certificate', '-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n', pair.key, 'tls.crt does not parse as a PEM certificate'],
      ['an empty tls.key', pair.cert, ' ', 'tls.key is empty'],
      ['a tls.key without a PEM block', pair.cert, 'not a key', 'tls.key holds no PEM private key (no BEGIN PRIVATE KEY block)'],
      ['a PEM key block that does not parse', pair.cert, '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n', 'tls.key does not parse as a PEM private key'],
      ['an encrypted key', pair.cert, encrypted, 'tls.key is encrypted; it must be an unencrypted PEM private key'],
      ['the key of another certificate', pair.cert, other.key, 'tls.key is not the private key of the certificate in tls.crt'],
      ['a key of another algorithm', pair.cert, rsa.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), 'tls.key is not the private key of the certificate in tls.crt'],
    ];
    for (const [what, cert, key, problem] of cases) expect(checkTlsPair(cert, key), what).to.equal(problem);
  });

  it('never quotes the data it was given', () => {
    for (const [cert, key] of [[pair.cert, other.key], [pair.cert, 'secret-key-material'], ['secret-cert-material', pair.key]] as const) {
      const problem = checkTlsPair(cert, key) ?? '';
      expect(problem).to.not.include('secret-');
      expect(problem).to.not.include('MII');
    }
  });
});

describe('Gateway listeners and unusable certificate pairs', () => {
  let pair: TestCertificate;
  let other: TestCertificate;

  before(() => {
    pair = selfSignedCertificate(['shop.example.com']);
    other = selfSignedCertificate(['other.example.com']);
  });

  const b64 = (s: string): string => Buffer.from(s).toString('base64');
  const secret = (name: string, cert: string, key: string): Record<string, unknown> => ({
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'kubernetes.io/tls',
    metadata: { name, namespace: 'infra' },
    data: { 'tls.crt': b64(cert), 'tls.key': b64(key) },
  });
  const gatewayNaming = (name: string): unknown[] => [
    { apiVersion: GW, kind: 'GatewayClass', metadata: { name: 'tuna', generation: 1 }, spec: { controllerName: 'tuna.dev/gateway-controller' } },
    {
      apiVersion: GW,
      kind: 'Gateway',
      metadata: { name: 'gw', namespace: 'infra', generation: 1 },
      spec: { gatewayClassName: 'tuna', listeners: [{ name: 'https', port: 443, protocol: 'HTTPS', tls: { certificateRefs: [{ name }] } }] },
    },
  ];
  const listenerOf = (objects: unknown[]) => {
    const result = translateSnapshot(snapshotFromObjects(objects).snapshot);
    const status = result.statuses.find((s) => s.ref.kind === 'Gateway')?.status as { listeners: { conditions: { type: string; status: string; reason: string; message: string }[] }[] };
    return { graph: result.graph, conditions: status.listeners[0]!.conditions };
  };

  it('keeps only the verdict in the snapshot: no data, no key text', () => {
    const { snapshot } = snapshotFromObjects([secret('swapped', pair.key, pair.cert), secret('good', pair.cert, pair.key)]);
    const [swapped, good] = snapshot.secrets as unknown as Record<string, unknown>[];
    expect(swapped).to.include({ tlsPairProblem: 'tls.crt holds no PEM certificate (no BEGIN CERTIFICATE block)' });
    expect(swapped).to.not.have.property('data');
    expect(JSON.stringify(snapshot)).to.not.include('PRIVATE KEY').and.not.include(b64(pair.key).slice(0, 40));
    expect(good).to.not.have.property('tlsPairProblem');
  });

  for (const [what, cert, key, problem] of [
    ['a mismatched key', () => pair.cert, () => other.key, 'tls.key is not the private key of the certificate in tls.crt'],
    ['malformed PEM', () => '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n', () => pair.key, 'tls.crt does not parse as a PEM certificate'],
  ] as const) {
    it(`reports a Secret with ${what} as ResolvedRefs=False InvalidCertificateRef naming the Secret, and serves nothing`, () => {
      const { graph, conditions } = listenerOf([...gatewayNaming('cert'), secret('cert', cert(), key())]);
      expect(conditions.find((c) => c.type === 'ResolvedRefs')).to.deep.include({
        status: 'False',
        reason: 'InvalidCertificateRef',
        message: `certificateRef infra/cert is not a usable certificate: ${problem}`,
      });
      expect(graph.listeners).to.deep.equal([]);
    });
  }

  it('terminates in the cluster with a Secret holding a good pair (data or stringData)', () => {
    const withData = listenerOf([...gatewayNaming('cert'), secret('cert', pair.cert, pair.key)]);
    expect(withData.conditions.find((c) => c.type === 'ResolvedRefs')).to.include({ status: 'True' });
    expect(withData.graph.listeners[0]?.tls).to.deep.equal({ mode: 'terminate-in-cluster', certificates: [{ namespace: 'infra', name: 'cert' }] });
    const stringData = { apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/tls', metadata: { name: 'cert', namespace: 'infra' }, stringData: { 'tls.crt': pair.cert, 'tls.key': pair.key } };
    expect(listenerOf([...gatewayNaming('cert'), stringData]).graph.listeners).to.have.length(1);
  });
});
