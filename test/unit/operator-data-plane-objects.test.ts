/**
 * The objects of a Gateway's dedicated data plane (src/operator/data-plane-objects.ts): every one
 * labelled with the gateway-name label and the infrastructure labels, annotated with the
 * infrastructure annotations (the pod template too), owned by the Gateway where it can be, and the
 * whole set equal to test/unit/data-plane/objects.yaml (`UPDATE_GOLDEN=1` rewrites it).
 */
import { expect } from 'chai';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';
import {
  DATA_PLANE_LABEL,
  GATEWAY_NAME_LABEL,
  KEY_ID_ANNOTATION,
  dataPlaneBindingName,
  dataPlaneObjects,
  dataPlaneProblem,
} from '../../src/operator/data-plane-objects.js';
import type { DataPlaneSettings } from '../../src/operator/data-plane-objects.js';

const golden = join(dirname(fileURLToPath(import.meta.url)), 'data-plane', 'objects.yaml');
const gateway = { namespace: 'shop', name: 'web', uid: 'uid-1', labels: { team: 'web', 'example.com/tier': 'front' }, annotations: { 'example.com/owner': 'web-team' } };
const settings: DataPlaneSettings = { image: 'registry.example/tuna/operator:1.2.3', clusterRole: 'tuna-data-plane', edge: 'tls://edge.example:443', ca: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n', clusterId: 'c1', baseDomain: 'tuna.example', connections: 2 };
const key = { keyId: 'tk_1', token: 'tuna_tk_secret', edgeBindingId: 'binding/address/203.0.113.7' };
const dedicated = {
  replicas: 2,
  resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '256Mi' } },
  nodeSelector: { pool: 'edge-facing' },
  tolerations: [{ key: 'dedicated', operator: 'Equal' as const, value: 'gateways', effect: 'NoSchedule' as const }],
};

describe('dedicated data plane objects', () => {
  const objects = dataPlaneObjects(gateway, dedicated, undefined, key, settings);
  const all = [objects.serviceAccount, objects.clusterRoleBinding, objects.secret, objects.deployment];

  it('are the golden set (ServiceAccount, ClusterRoleBinding, Secret, Deployment)', () => {
    const text = stringify(all, { sortMapEntries: true, aliasDuplicateObjects: false });
    if (process.env.UPDATE_GOLDEN === '1') writeFileSync(golden, text);
    expect(existsSync(golden), `${golden} missing: run with UPDATE_GOLDEN=1`).to.equal(true);
    expect(parse(text)).to.deep.equal(parse(readFileSync(golden, 'utf8')));
  });

  it('label every object and the pod template with the gateway-name label and the infrastructure labels, and annotate them', () => {
    const template = objects.deployment.spec!.template.metadata!;
    for (const meta of [...all.map((o) => o.metadata!), template]) {
      expect(meta.labels).to.include({ [GATEWAY_NAME_LABEL]: 'web', team: 'web', 'example.com/tier': 'front', [DATA_PLANE_LABEL]: 'true' });
      expect(meta.annotations).to.include({ 'example.com/owner': 'web-team' });
    }
    expect(template.annotations).to.include({ [KEY_ID_ANNOTATION]: 'tk_1' });
  });

  it('select the pods by the gateway-name label only, so a change of the infrastructure labels keeps the selector', () => {
    expect(objects.deployment.spec!.selector.matchLabels).to.deep.equal({ [GATEWAY_NAME_LABEL]: 'web', [DATA_PLANE_LABEL]: 'true' });
    const relabelled = dataPlaneObjects({ ...gateway, labels: { team: 'shop' } }, dedicated, undefined, key, settings);
    expect(relabelled.deployment.spec!.selector).to.deep.equal(objects.deployment.spec!.selector);
    expect(relabelled.deployment.spec!.template.metadata!.labels).to.include({ team: 'shop' });
  });

  it('keep tuna labels over infrastructure labels of the same key', () => {
    const hijack = dataPlaneObjects({ ...gateway, labels: { [GATEWAY_NAME_LABEL]: 'other' } }, dedicated, undefined, key, settings);
    expect(hijack.deployment.spec!.template.metadata!.labels![GATEWAY_NAME_LABEL]).to.equal('web');
  });

  it('are owned by the Gateway in its namespace; the cluster-scoped ClusterRoleBinding names it by labels instead', () => {
    for (const o of [objects.serviceAccount, objects.secret, objects.deployment]) {
      expect(o.metadata!.namespace).to.equal('shop');
      expect(o.metadata!.ownerReferences).to.deep.equal([{ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', name: 'web', uid: 'uid-1', controller: true }]);
    }
    expect(objects.clusterRoleBinding.metadata!.ownerReferences).to.equal(undefined);
    expect(objects.clusterRoleBinding.metadata!.labels).to.include({ 'tuna.dev/gateway-namespace': 'shop' });
    expect(objects.clusterRoleBinding.roleRef.name).to.equal('tuna-data-plane');
    expect(objects.clusterRoleBinding.subjects).to.deep.equal([{ kind: 'ServiceAccount', name: 'tuna-gw-web', namespace: 'shop' }]);
  });

  it('run the operator image in data-plane mode, the key only from the Secret (never in the arguments)', () => {
    const pod = objects.deployment.spec!.template.spec!;
    const container = pod.containers[0]!;
    expect(container.image).to.equal(settings.image);
    expect(container.args).to.include('--data-plane-for=shop/web');
    expect(JSON.stringify(container.args)).to.not.contain('tuna_tk_secret');
    expect(JSON.stringify(objects.deployment)).to.not.contain('tuna_tk_secret');
    expect(objects.secret.stringData).to.include({ token: 'tuna_tk_secret', 'key-id': 'tk_1', binding: 'binding/address/203.0.113.7' });
    expect(pod.serviceAccountName).to.equal('tuna-gw-web');
    expect(objects.deployment.spec!.replicas).to.equal(2);
    expect(pod.nodeSelector).to.deep.equal({ pool: 'edge-facing' });
    expect(pod.tolerations).to.deep.equal(dedicated.tolerations);
    expect(container.resources).to.deep.equal(dedicated.resources);
  });

  it('default to one replica, the operator\'s connections and no CA volume', () => {
    const { ca: _ca, ...noCa } = settings;
    const plain = dataPlaneObjects(gateway, {}, 4, key, noCa);
    expect(plain.deployment.spec!.replicas).to.equal(1);
    expect(plain.deployment.spec!.template.spec!.containers[0]!.args).to.include('--connections=4');
    expect(plain.deployment.spec!.template.spec!.volumes!.map((v) => v.name)).to.deep.equal(['tmp']);
    expect(plain.secret.stringData).to.not.have.property('ca.crt');
  });

  it('refuse a Gateway name that cannot be a label value, and keep long ClusterRoleBinding names unique and short', () => {
    expect(dataPlaneProblem({ name: 'a'.repeat(63) })).to.equal(undefined);
    expect(dataPlaneProblem({ name: 'a'.repeat(64) })).to.contain('at most 63 characters');
    const long = dataPlaneBindingName('n'.repeat(63), 'g'.repeat(200));
    expect(long.length).to.be.at.most(253);
    expect(long).to.not.equal(dataPlaneBindingName('n'.repeat(63), `${'g'.repeat(199)}h`));
  });
});
