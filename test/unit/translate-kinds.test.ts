/**
 * The table of kinds (src/translate/kinds.ts): its rows are consistent, the Snapshot, the route
 * kinds and the features come from it, and TLSRoute / TCPRoute translate alike at every version the
 * table names.
 */
import { expect } from 'chai';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { SUPPORTED_FEATURES } from '../../src/translate/gateway/index.js';
import { kindsForProtocol } from '../../src/translate/gateway/kinds.js';
import { testSigner } from '../support/jwt-keys.js';
import { KINDS, ROUTE_KINDS, emptySnapshot, snapshotFromObjects, snapshotKey, translateSnapshot } from '../../src/translate/index.js';

const golden = join(dirname(fileURLToPath(import.meta.url)), '..', 'golden', 'gateway');

describe('the table of kinds', () => {
  it('names each group/kind, plural and snapshot list once', () => {
    for (const column of [(k: (typeof KINDS)[number]) => `${k.group}/${k.kind}`, (k: (typeof KINDS)[number]) => `${k.group}/${k.plural}`, (k: (typeof KINDS)[number]) => k.key]) {
      const values = KINDS.map(column);
      expect(new Set(values).size, values.join(', ')).to.equal(values.length);
    }
  });

  it('gives the empty snapshot one list per row', () => {
    expect(Object.keys(emptySnapshot()).sort()).to.deep.equal(KINDS.map((k) => k.key).sort());
  });

  it('keeps of a Secret\'s htpasswd `auth` key only its parsed hashes or line problems, never the text', () => {
    const secret = (name: string, auth: string) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'web' }, data: { auth: Buffer.from(auth).toString('base64'), other: 'c2VjcmV0' } });
    const hash = '{SHA}GpHWL3ymc5liWkNopqtdSjuqYHM=';
    const [good, bad] = snapshotFromObjects([secret('good', `bob:${hash}\n`), secret('bad', 'not-htpasswd-at-all')]).snapshot.secrets;
    expect(good).to.deep.equal({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'good', namespace: 'web' }, dataKeys: ['auth', 'other'], authHtpasswd: { kind: 'ok', users: [{ name: 'bob', hash }] } });
    expect(JSON.stringify(bad)).to.not.include('not-htpasswd-at-all');
    expect((bad as { authHtpasswd?: unknown }).authHtpasswd).to.deep.equal({ kind: 'invalid', errors: ['line 1: expected user:hash'] });
  });

  it('keeps of a JSON Web Key Set in a Secret or a ConfigMap only its public signing keys, or what is wrong with it', () => {
    const signer = testSigner('k1', 'ES256');
    const privateSet = JSON.stringify({ keys: [{ ...(signer.privateKey.export({ format: 'jwk' }) as object), kid: 'k1', alg: 'ES256' }] });
    const [secret] = snapshotFromObjects([
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'idp', namespace: 'web' }, stringData: { 'jwks.json': privateSet, 'bad.json': '{"keys": [', 'tls.key': 'PEM' } },
    ]).snapshot.secrets;
    const d = (signer.privateKey.export({ format: 'jwk' }) as { d: string }).d;
    expect(JSON.stringify(secret)).to.not.include(d);
    expect((secret as { jwks?: unknown }).jwks).to.deep.equal({ 'jwks.json': { kind: 'ok', keys: [signer.jwk] }, 'bad.json': { kind: 'invalid', error: 'not valid JSON' } });
    const [configMap] = snapshotFromObjects([{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'idp', namespace: 'web' }, data: { 'keys.json': JSON.stringify({ keys: [signer.jwk] }), 'app.conf': 'x=1' } }]).snapshot.configMaps;
    expect(configMap).to.deep.equal({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'idp', namespace: 'web' }, jwks: { 'keys.json': { kind: 'ok', keys: [signer.jwk] } } });
  });

  it('keeps of a ConfigMap only its metadata and its ca.crt key, for BackendTLSPolicy CA bundles', () => {
    const [bundle, other] = snapshotFromObjects([
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ca', namespace: 'web' }, data: { 'ca.crt': 'PEM', 'app.conf': 'x=1' }, binaryData: { blob: 'AA==' } },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'web' }, data: { 'app.conf': 'x=1' } },
    ]).snapshot.configMaps;
    expect(bundle).to.deep.equal({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ca', namespace: 'web' }, data: { 'ca.crt': 'PEM' } });
    expect(other).to.deep.equal({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'web' } });
  });

  it('files an object of any listed version of a kind under its row', () => {
    for (const k of KINDS)
      for (const version of k.versions) expect(snapshotKey({ apiVersion: k.group === '' ? version : `${k.group}/${version}`, kind: k.kind })).to.equal(k.key);
    expect(snapshotKey({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'SCTPRoute' })).to.equal(undefined);
  });

  it('claims exactly the features of its rows, sorted', () => {
    const fromRows = KINDS.flatMap((k) => ('features' in k ? [...k.features] : []));
    expect([...SUPPORTED_FEATURES]).to.deep.equal([...new Set(fromRows)].sort());
    // Each route kind is claimed: TCPRoute and UDPRoute too, now that a Gateway's address serves its
    // listeners' ports and the GATEWAY-UDP profile passes (docs/conformance.md).
    const unclaimed: string[] = [];
    for (const route of ROUTE_KINDS) expect(SUPPORTED_FEATURES.includes(route.kind), route.kind).to.equal(!unclaimed.includes(route.kind));
  });

  it('lets each listener protocol serve the route kinds whose rows name it, in table order', () => {
    expect(kindsForProtocol('HTTP')).to.deep.equal(['HTTPRoute', 'GRPCRoute']);
    expect(kindsForProtocol('HTTPS')).to.deep.equal(['HTTPRoute', 'GRPCRoute']);
    expect(kindsForProtocol('TLS')).to.deep.equal(['TLSRoute']);
    expect(kindsForProtocol('TCP')).to.deep.equal(['TCPRoute']);
    expect(kindsForProtocol('UDP')).to.deep.equal(['UDPRoute']);
    expect(kindsForProtocol('SCTP')).to.deep.equal([]);
  });
});

/** atVersion rewrites the apiVersion of every object of `kinds` to `group/version`. */
function atVersion(objects: unknown[], kinds: readonly string[], version: string): unknown[] {
  return objects.map((o) => {
    const obj = o as { kind?: string };
    return kinds.includes(obj.kind ?? '') ? { ...obj, apiVersion: `gateway.networking.k8s.io/${version}` } : o;
  });
}

describe('TLSRoute, TCPRoute and UDPRoute at every version the table names', () => {
  const scenarios = readdirSync(golden).filter((f) => f.endsWith('.in.yaml') && /kind: (TLSRoute|TCPRoute|UDPRoute)/.test(readFileSync(join(golden, f), 'utf8')));

  it('has golden scenarios with stream routes to try', () => {
    expect(scenarios.length).to.be.greaterThan(3);
  });

  for (const file of scenarios) {
    it(`translates ${file.replace('.in.yaml', '')} alike at v1 and v1alpha2`, () => {
      const objects = parseAllDocuments(readFileSync(join(golden, file), 'utf8')).map((d) => d.toJS() as unknown).filter((o) => o !== null);
      const kinds = ['TLSRoute', 'TCPRoute', 'UDPRoute'];
      const translate = (version: string) => translateSnapshot(snapshotFromObjects(atVersion(objects, kinds, version)).snapshot);
      const v1 = translate('v1');
      expect(v1.graph.streamRoutes.length + v1.statuses.length).to.be.greaterThan(0);
      expect(translate('v1alpha2')).to.deep.equal(v1);
    });
  }
});
