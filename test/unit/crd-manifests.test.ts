/**
 * config/crd and config/samples: every CRD parses and names the right group, kind and versions,
 * agrees with the codecs on the enums they share, and every sample decodes with its codec.
 */
import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import {
  TUNA_API_VERSION,
  TUNA_GROUP,
  ROUTE_POLICY_FIELDS,
  DATA_PLANES,
  MAX_DATA_PLANE_REPLICAS,
  MAX_TUNNEL_CONNECTIONS,
  decodeDomain,
  decodeGatewayParameters,
  decodeRoutePolicy,
  decodeTCPPort,
  decodeTunnel,
  reclaimPolicyCodec,
  tunnelProtocolCodec,
} from '../../src/crd/index.js';
import type { DecodeResult } from '../../src/codec/index.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'config');

type Schema = { properties?: Record<string, Schema>; enum?: unknown[]; required?: string[]; 'x-kubernetes-validations'?: unknown[] };

interface Crd {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  spec: {
    group: string;
    scope: string;
    names: { kind: string; plural: string; shortNames?: string[]; categories?: string[] };
    versions: { name: string; served: boolean; storage: boolean; subresources?: { status?: object }; schema: { openAPIV3Schema: Schema }; additionalPrinterColumns?: { jsonPath: string }[] }[];
  };
}

function loadYaml(file: string): unknown[] {
  const docs = parseAllDocuments(readFileSync(file, 'utf8'));
  for (const d of docs) expect(d.errors, `${file} parses`).to.deep.equal([]);
  return docs.map((d) => d.toJS() as unknown).filter((d) => d !== null);
}

const crds = new Map<string, Crd>();
for (const file of readdirSync(join(root, 'crd')).filter((f) => f.endsWith('.yaml')).sort()) {
  for (const doc of loadYaml(join(root, 'crd', file))) {
    const crd = doc as Crd;
    crds.set(crd.spec.names.kind, crd);
  }
}

function specSchema(kind: string): Schema {
  const crd = crds.get(kind);
  expect(crd, `CRD for ${kind}`).to.not.equal(undefined);
  return crd!.spec.versions[0]!.schema.openAPIV3Schema.properties!.spec!;
}

describe('config/crd', () => {
  it('holds exactly the Domain, GatewayParameters, RoutePolicy, TCPPort and Tunnel CRDs', () => {
    expect([...crds.keys()].sort()).to.deep.equal(['Domain', 'GatewayParameters', 'RoutePolicy', 'TCPPort', 'Tunnel']);
  });

  it('defines GatewayParameters as a namespaced v1alpha1 CRD without status, its tunnelConnections bounded as the codec bounds it', () => {
    const crd = crds.get('GatewayParameters')!;
    expect(crd.metadata.name).to.equal(`gatewayparameters.${TUNA_GROUP}`);
    expect(crd.spec.scope).to.equal('Namespaced');
    expect(crd.spec.names.categories).to.include('tuna');
    expect(crd.spec.versions.map((v) => `${crd.spec.group}/${v.name}`)).to.deep.equal([TUNA_API_VERSION]);
    expect(crd.spec.versions[0]!.subresources).to.equal(undefined);
    const spec = specSchema('GatewayParameters') as Schema & { properties: Record<string, Schema & { minimum?: number; maximum?: number }> };
    expect(Object.keys(spec.properties)).to.deep.equal(['tunnelConnections', 'dataPlane', 'deployment']);
    expect([spec.properties.tunnelConnections!.minimum, spec.properties.tunnelConnections!.maximum]).to.deep.equal([1, MAX_TUNNEL_CONNECTIONS]);
    const sample = { apiVersion: TUNA_API_VERSION, kind: 'GatewayParameters', metadata: { name: 'p', namespace: 'n' } };
    expect(decodeGatewayParameters({ ...sample, spec: { tunnelConnections: MAX_TUNNEL_CONNECTIONS } }).ok).to.equal(true);
    expect(decodeGatewayParameters({ ...sample, spec: { tunnelConnections: MAX_TUNNEL_CONNECTIONS + 1 } }).ok).to.equal(false);
    expect(decodeGatewayParameters({ ...sample, spec: { tunnelConnections: 0 } }).ok).to.equal(false);
  });

  it('lists the same dataPlane values as the codec, bounds replicas as it does, and states the Shared-with-deployment rule in CEL', () => {
    const spec = specSchema('GatewayParameters') as Schema & { properties: Record<string, Schema & { properties?: Record<string, Schema & { minimum?: number; maximum?: number }> }> };
    expect(spec.properties.dataPlane!.enum).to.deep.equal([...DATA_PLANES]);
    const deployment = spec.properties.deployment!.properties!;
    expect(Object.keys(deployment)).to.deep.equal(['replicas', 'resources', 'nodeSelector', 'tolerations']);
    expect([deployment.replicas!.minimum, deployment.replicas!.maximum]).to.deep.equal([1, MAX_DATA_PLANE_REPLICAS]);
    expect(JSON.stringify(spec['x-kubernetes-validations'])).to.contain("self.dataPlane == 'Shared'");
    expect(readFileSync(join(root, 'crd', 'tuna.dev_gatewayparameters.yaml'), 'utf8')).to.equal(readFileSync(join(root, '..', 'charts', 'tuna', 'crds', 'tuna.dev_gatewayparameters.yaml'), 'utf8'));
  });

  it('defines RoutePolicy as a namespaced v1alpha1 CRD with a status subresource and the codec\'s spec fields', () => {
    const crd = crds.get('RoutePolicy')!;
    expect(crd.metadata.name).to.equal(`routepolicies.${TUNA_GROUP}`);
    expect(crd.spec.scope).to.equal('Namespaced');
    expect(crd.spec.names.categories).to.include('tuna');
    expect(crd.spec.versions.map((v) => `${crd.spec.group}/${v.name}`)).to.deep.equal([TUNA_API_VERSION]);
    expect(crd.spec.versions[0]!.subresources?.status).to.deep.equal({});
    expect(Object.keys(specSchema('RoutePolicy').properties!).sort()).to.deep.equal(['targetRefs', ...ROUTE_POLICY_FIELDS].sort());
    const status = crd.spec.versions[0]!.schema.openAPIV3Schema.properties!.status!;
    expect(Object.keys(status.properties!)).to.deep.equal(['ancestors']);
  });

  for (const [kind, plural] of [
    ['Domain', 'domains'],
    ['TCPPort', 'tcpports'],
    ['Tunnel', 'tunnels'],
  ] as const) {
    it(`defines ${kind} as a namespaced apiextensions.k8s.io/v1 CRD of ${TUNA_GROUP}, v1alpha1 served and stored, with a status subresource`, () => {
      const crd = crds.get(kind)!;
      expect(crd.apiVersion).to.equal('apiextensions.k8s.io/v1');
      expect(crd.kind).to.equal('CustomResourceDefinition');
      expect(crd.metadata.name).to.equal(`${plural}.${TUNA_GROUP}`);
      expect(crd.spec.group).to.equal(TUNA_GROUP);
      expect(crd.spec.scope).to.equal('Namespaced');
      expect(crd.spec.names.plural).to.equal(plural);
      expect(crd.spec.names.shortNames ?? []).to.have.length.greaterThan(0);
      expect(crd.spec.names.categories).to.include('tuna');
      expect(crd.spec.versions.map((v) => `${crd.spec.group}/${v.name}`)).to.deep.equal([TUNA_API_VERSION]);
      const version = crd.spec.versions[0]!;
      expect(version.served && version.storage).to.equal(true);
      expect(version.subresources?.status).to.deep.equal({});
      expect(version.additionalPrinterColumns?.map((c) => c.jsonPath)).to.include('.status.conditions[?(@.type=="Ready")].status');
    });
  }

  it('gives every short name once', () => {
    const names = [...crds.values()].flatMap((c) => c.spec.names.shortNames ?? []);
    expect(new Set(names).size).to.equal(names.length);
  });

  it('lists the same reclaimPolicy values as the codec', () => {
    const codecValues = Object.keys(reclaimPolicyCodec.keys).sort();
    expect((specSchema('Domain').properties!.reclaimPolicy!.enum ?? []).slice().sort()).to.deep.equal(codecValues);
    expect((specSchema('TCPPort').properties!.reclaimPolicy!.enum ?? []).slice().sort()).to.deep.equal(codecValues);
  });

  it('lists the same Tunnel protocols as the codec, and requires service and protocol', () => {
    const spec = specSchema('Tunnel');
    expect((spec.properties!.protocol!.enum ?? []).slice().sort()).to.deep.equal(Object.keys(tunnelProtocolCodec.keys).sort());
    expect(spec.required).to.deep.equal(['service', 'protocol']);
    expect(spec.properties!.service!.properties).to.not.have.property('namespace');
  });

  it('states the exactly-one-of and protocol rules in CEL', () => {
    expect(JSON.stringify(specSchema('Domain')['x-kubernetes-validations'])).to.contain('has(self.subdomain) != has(self.customDomain)');
    expect(specSchema('Tunnel')['x-kubernetes-validations']).to.have.length(2);
  });
});

const decoders: Record<string, (u: unknown) => DecodeResult<unknown>> = {
  Domain: decodeDomain,
  GatewayParameters: decodeGatewayParameters,
  RoutePolicy: decodeRoutePolicy,
  TCPPort: decodeTCPPort,
  Tunnel: decodeTunnel,
};

const sampleFiles = readdirSync(join(root, 'samples')).filter((f) => f.endsWith('.yaml')).sort();
const samples = sampleFiles.map((file) => ({ file, docs: loadYaml(join(root, 'samples', file)) }));

describe('config/samples', () => {
  for (const { file, docs } of samples) {
    it(`decodes every object of ${file} with its codec`, () => {
      expect(docs).to.have.length.greaterThan(0);
      for (const doc of docs) {
        const kind = (doc as { kind?: string }).kind ?? '';
        const decode = decoders[kind];
        expect(decode, `a codec for ${kind}`).to.not.equal(undefined);
        expect(decode!(doc)).to.deep.include({ ok: true });
      }
    });
  }

  it('has a sample of each kind', () => {
    const kinds = new Set(samples.flatMap(({ docs }) => docs.map((d) => (d as { kind?: string }).kind)));
    expect([...kinds].sort()).to.deep.equal(Object.keys(decoders).sort());
  });
});
