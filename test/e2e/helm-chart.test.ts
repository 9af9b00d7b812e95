/**
 * charts/tuna, rendered by Helm v3 (hack/helm.sh): lint, the restricted Pod Security context, RBAC
 * rules equal to config/rbac, CRDs equal to config/crd, the credentials Secret and its mount, the
 * PodDisruptionBudget, the classes, and the values' schema and documentation.
 */
import { expect } from 'chai';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isMap, parseDocument } from 'yaml';
import type { Scalar, YAMLMap } from 'yaml';
import { CHART, ensureHelm, helmFails, helmTemplate, parseManifests, runHelm, setFlags } from '../support/helm.js';
import type { KubeObject } from '../support/helm.js';

const repo = (path: string): string => fileURLToPath(new URL(`../../${path}`, import.meta.url));
const REQUIRED = { 'edge.address': 'edge.example.com:7443', 'credentials.apiKey': 'tuna_ak_test' };
const GATEWAY_API = ['--api-versions', 'gateway.networking.k8s.io/v1/GatewayClass'];

type Rule = { apiGroups?: string[]; resources?: string[]; resourceNames?: string[]; verbs?: string[] };
interface Container {
  image: string;
  args: string[];
  env: { name: string; valueFrom?: { fieldRef?: { fieldPath: string } } }[];
  ports: { name: string; containerPort: number }[];
  livenessProbe: { httpGet: { path: string; port: string } };
  readinessProbe: { httpGet: { path: string; port: string } };
  securityContext: Record<string, unknown>;
  volumeMounts: { name: string; mountPath: string; readOnly?: boolean }[];
}
interface PodSpec {
  securityContext: Record<string, unknown>;
  containers: Container[];
  volumes: { name: string; secret?: { secretName: string; items: { key: string; path: string }[] }; configMap?: { name: string }; emptyDir?: object }[];
  serviceAccountName: string;
  hostNetwork?: boolean;
}

const one = (objects: KubeObject[], kind: string): KubeObject => {
  const found = objects.filter((o) => o.kind === kind);
  expect(found, kind).to.have.length(1);
  return found[0]!;
};
const podSpec = (objects: KubeObject[]): PodSpec => (one(objects, 'Deployment').spec as { template: { spec: PodSpec } }).template.spec;
const rulesOf = (o: KubeObject): Rule[] => o.rules as Rule[];
/** normalized sorts a rule list (and each rule's lists), so equal permissions compare equal. */
const normalized = (rules: Rule[]): string[] =>
  rules.map((r) => JSON.stringify(Object.fromEntries(Object.entries(r).map(([k, v]) => [k, [...(v as string[])].sort()])))).sort();

describe('charts/tuna (helm template)', function () {
  this.timeout(600_000);
  let helm: string;
  let defaults: KubeObject[];
  let work: string;

  before(async () => {
    helm = await ensureHelm();
    work = mkdtempSync(join(tmpdir(), 'tuna-chart-'));
    defaults = await helmTemplate(helm, REQUIRED, GATEWAY_API);
  });
  after(() => rmSync(work, { recursive: true, force: true }));

  it('passes helm lint with the default values and with every option set', async () => {
    expect(await runHelm(helm, ['lint', CHART, ...setFlags(REQUIRED)])).to.include('1 chart(s) linted, 0 chart(s) failed');
    const ca = join(work, 'ca.crt');
    writeFileSync(ca, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
    const all = setFlags({ ...REQUIRED, replicas: 3, clusterId: 'c1', 'edge.baseDomain': 'tuna.example', 'ingressClass.default': true, 'health.port': 9090, logFormat: 'text' });
    expect(await runHelm(helm, ['lint', CHART, '--strict', ...all, '--set-file', `edge.caBundle=${ca}`])).to.include('0 chart(s) failed');
  });

  it('runs the pods under the restricted Pod Security level: non-root, read-only root, no capabilities, RuntimeDefault seccomp', () => {
    const pod = podSpec(defaults);
    expect(pod.securityContext).to.deep.include({ runAsNonRoot: true, runAsUser: 65532, seccompProfile: { type: 'RuntimeDefault' } });
    expect(pod.hostNetwork).to.equal(undefined);
    const [container] = pod.containers;
    expect(container!.securityContext).to.deep.equal({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
    // restricted allows only these volume types
    for (const v of pod.volumes) expect(Object.keys(v).filter((k) => k !== 'name'), v.name).to.satisfy((keys: string[]) => keys.every((k) => ['secret', 'configMap', 'emptyDir', 'projected'].includes(k)));
  });

  it('grants with dataPlane.enabled exactly the rules of config/rbac: the ClusterRoles (the operator\'s, the data planes\'), and the Role of the keys Secret and the Lease; without it, no right to make data planes', async () => {
    const config = parseManifests(readFileSync(repo('config/rbac/operator.yaml'), 'utf8'));
    const named = (objects: KubeObject[], name: string): KubeObject => objects.find((o) => o.kind === 'ClusterRole' && o.metadata.name === name)!;
    const enabled = await helmTemplate(helm, { ...REQUIRED, 'dataPlane.enabled': true }, GATEWAY_API);
    // the chart names the data planes' ClusterRole after the release: the operator may bind that one only
    const chartRules = (name: string): string[] => normalized(rulesOf(named(enabled, name))).map((r) => r.replace('tuna-operator-data-plane', 'tuna-data-plane'));
    expect(enabled.filter((o) => o.kind === 'ClusterRole').map((o) => o.metadata.name).sort()).to.deep.equal(['tuna-operator', 'tuna-operator-data-plane']);
    expect(chartRules('tuna-operator'), 'ClusterRole tuna-operator').to.deep.equal(normalized(rulesOf(named(config, 'tuna-operator'))));
    expect(chartRules('tuna-operator-data-plane'), 'the data planes\' ClusterRole').to.deep.equal(normalized(rulesOf(named(config, 'tuna-data-plane'))));
    expect(normalized(rulesOf(one(enabled, 'Role'))), 'Role').to.deep.equal(normalized(rulesOf(one(config, 'Role'))));
    expect(podSpec(enabled).containers[0]!.args).to.include.members([`--data-plane-image=${podSpec(enabled).containers[0]!.image}`, '--data-plane-cluster-role=tuna-operator-data-plane']);
    // off by default: the operator may not write a Secret, a Deployment or a binding anywhere
    expect(defaults.filter((o) => o.kind === 'ClusterRole').map((o) => o.metadata.name)).to.deep.equal(['tuna-operator']);
    const writes = rulesOf(named(defaults, 'tuna-operator')).filter((r) => (r.resources ?? []).some((x) => ['secrets', 'deployments', 'serviceaccounts', 'clusterrolebindings'].includes(x)) && (r.verbs ?? []).some((v) => ['create', 'update', 'delete'].includes(v)));
    expect(writes, 'write rights without dataPlane.enabled').to.deep.equal([]);
    expect(podSpec(defaults).containers[0]!.args.filter((a) => a.startsWith('--data-plane'))).to.deep.equal([]);
    const secrets = rulesOf(named(enabled, 'tuna-operator-data-plane')).filter((r) => r.resources?.includes('secrets'));
    expect(secrets).to.deep.equal([{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }]);
    const binding = one(defaults, 'ClusterRoleBinding') as KubeObject & { subjects: { name: string; namespace: string }[] };
    expect(binding.subjects).to.deep.equal([{ kind: 'ServiceAccount', name: 'tuna-operator', namespace: 'tuna-system' }]);
    expect(one(defaults, 'Role').metadata.namespace).to.equal('tuna-system');
    expect(podSpec(defaults).serviceAccountName).to.equal('tuna-operator');
  });

  it('ships the CRDs of config/crd unchanged', () => {
    const files = readdirSync(repo('config/crd')).sort();
    expect(readdirSync(join(CHART, 'crds')).sort()).to.deep.equal(files);
    for (const f of files) expect(readFileSync(join(CHART, 'crds', f), 'utf8'), f).to.equal(readFileSync(repo(`config/crd/${f}`), 'utf8'));
  });

  it('keeps credentials.apiKey in a Secret mounted read-only and read with --key-file', () => {
    const secret = one(defaults, 'Secret') as KubeObject & { data: Record<string, string> };
    expect(secret.metadata.name).to.equal('tuna-operator-credentials');
    expect(Buffer.from(secret.data.apiKey!, 'base64').toString()).to.equal('tuna_ak_test');
    const pod = podSpec(defaults);
    expect(pod.volumes.find((v) => v.name === 'credentials')?.secret).to.deep.equal({ secretName: 'tuna-operator-credentials', items: [{ key: 'apiKey', path: 'apiKey' }] });
    const container = pod.containers[0]!;
    expect(container.volumeMounts).to.deep.include({ name: 'credentials', mountPath: '/var/run/tuna/credentials', readOnly: true });
    expect(container.args).to.include('--key-file=/var/run/tuna/credentials/apiKey');
    expect(container.args.join(' '), 'the key is never an argument').to.not.include('tuna_ak_test');
  });

  it('mounts credentials.existingSecret instead, and renders no Secret of its own', async () => {
    const objects = await helmTemplate(helm, { 'edge.address': 'tls://edge.example.com:7443', 'credentials.existingSecret': 'my-edge-key', 'credentials.existingSecretKey': 'token' });
    expect(objects.filter((o) => o.kind === 'Secret')).to.deep.equal([]);
    const pod = podSpec(objects);
    expect(pod.volumes.find((v) => v.name === 'credentials')?.secret).to.deep.equal({ secretName: 'my-edge-key', items: [{ key: 'token', path: 'token' }] });
    expect(pod.containers[0]!.args).to.include.members(['--key-file=/var/run/tuna/credentials/token', '--edge=tls://edge.example.com:7443']);
  });

  it('passes the edge address, connections, secret refresh, health address and log format, and sets the leader election identity', () => {
    const c = podSpec(defaults).containers[0]!;
    expect(c.args).to.deep.equal(['operator', '--edge=edge.example.com:7443', '--key-file=/var/run/tuna/credentials/apiKey', '--connections=2', '--key-connections=6', '--secret-refresh=30', '--health-addr=:8080', '--log-format=json']);
    expect(c.env.map((e) => [e.name, e.valueFrom?.fieldRef?.fieldPath])).to.deep.equal([
      ['POD_NAMESPACE', 'metadata.namespace'],
      ['POD_NAME', 'metadata.name'],
    ]);
  });

  it('probes /healthz and /readyz on the metrics port, and exposes it with a Service', () => {
    const c = podSpec(defaults).containers[0]!;
    expect(c.ports).to.deep.equal([{ name: 'metrics', containerPort: 8080, protocol: 'TCP' }]);
    expect(c.livenessProbe.httpGet).to.deep.equal({ path: '/healthz', port: 'metrics' });
    expect(c.readinessProbe.httpGet).to.deep.equal({ path: '/readyz', port: 'metrics' });
    const service = one(defaults, 'Service') as KubeObject & { spec: { ports: unknown[] } };
    expect(service.spec.ports).to.deep.equal([{ name: 'metrics', port: 8080, targetPort: 'metrics', protocol: 'TCP' }]);
  });

  it('adds a PodDisruptionBudget only when replicas > 1, and never takes a pod down before its successor is ready', async () => {
    const pdb = one(defaults, 'PodDisruptionBudget') as KubeObject & { spec: { minAvailable: number; selector: unknown } };
    expect(pdb.spec.minAvailable).to.equal(1);
    const deployment = one(defaults, 'Deployment') as KubeObject & { spec: { replicas: number; selector: unknown; strategy: unknown } };
    expect(deployment.spec.replicas).to.equal(2);
    expect(pdb.spec.selector).to.deep.equal(deployment.spec.selector);
    expect(deployment.spec.strategy).to.deep.equal({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } });
    const single = await helmTemplate(helm, { ...REQUIRED, replicas: 1 });
    expect(single.filter((o) => o.kind === 'PodDisruptionBudget')).to.deep.equal([]);
  });

  it('creates IngressClass tuna, the default class only with ingressClass.default, and GatewayClass tuna where Gateway API is served', async () => {
    const ingressClass = one(defaults, 'IngressClass');
    expect(ingressClass.metadata.name).to.equal('tuna');
    expect(ingressClass.spec).to.deep.equal({ controller: 'tuna.dev/ingress-controller' });
    expect(ingressClass.metadata.annotations).to.equal(undefined);
    const gatewayClass = one(defaults, 'GatewayClass').spec as { controllerName: string; description: string };
    expect(gatewayClass.controllerName).to.equal('tuna.dev/gateway-controller');
    expect(Buffer.byteLength(gatewayClass.description), 'the CRD allows 64 bytes').to.be.at.most(64);
    const asDefault = await helmTemplate(helm, { ...REQUIRED, 'ingressClass.default': true });
    expect(one(asDefault, 'IngressClass').metadata.annotations).to.deep.equal({ 'ingressclass.kubernetes.io/is-default-class': 'true' });
    expect(asDefault.filter((o) => o.kind === 'GatewayClass'), 'no Gateway API: no GatewayClass').to.deep.equal([]);
  });

  it('passes the CA bundle through a ConfigMap, and the cluster id and base domain as flags', async () => {
    const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----';
    const objects = await helmTemplate(helm, { ...REQUIRED, 'edge.caBundle': pem, clusterId: 'prod-eu', 'edge.baseDomain': 'tuna.example', 'health.port': 9090 });
    const configMap = one(objects, 'ConfigMap') as KubeObject & { data: Record<string, string> };
    expect(configMap.data['ca.crt']?.trim()).to.equal(pem);
    const pod = podSpec(objects);
    expect(pod.volumes.find((v) => v.name === 'edge-ca')?.configMap?.name).to.equal(configMap.metadata.name);
    expect(pod.containers[0]!.args).to.include.members(['--ca=/etc/tuna/edge-ca/ca.crt', '--cluster-id=prod-eu', '--base-domain=tuna.example', '--health-addr=:9090']);
    expect(pod.containers[0]!.ports[0]!.containerPort).to.equal(9090);
  });

  it('passes the access log flags only with accessLog.enabled, the template quoted whole', async () => {
    const objects = await helmTemplate(helm, { ...REQUIRED, 'accessLog.enabled': true, 'accessLog.format': "$client '$method' $host$path #$status", 'accessLog.sample': 0.1 });
    const args = podSpec(objects).containers[0]!.args;
    expect(args.slice(-3)).to.deep.equal(['--access-log=stdout', "--access-log-format=$client '$method' $host$path #$status", '--access-log-sample=0.1']);
    expect(podSpec(defaults).containers[0]!.args.filter((a) => a.startsWith('--access-log'))).to.deep.equal([]);
    expect(await helmFails(helm, ['template', 'tuna', CHART, ...setFlags({ ...REQUIRED, 'accessLog.sample': 0 })])).to.include("at '/accessLog/sample'");
  });

  it('passes the trace flags only with tracing.endpoint, and refuses an endpoint that is not an http(s) URL or a share above 1', async () => {
    const objects = await helmTemplate(helm, { ...REQUIRED, 'tracing.endpoint': 'http://otel-collector.observability:4318/v1/traces', 'tracing.sample': 0.25 });
    const args = podSpec(objects).containers[0]!.args;
    expect(args.slice(-2)).to.deep.equal(['--trace-endpoint=http://otel-collector.observability:4318/v1/traces', '--trace-sample=0.25']);
    expect(podSpec(defaults).containers[0]!.args.filter((a) => a.startsWith('--trace'))).to.deep.equal([]);
    expect(await helmFails(helm, ['template', 'tuna', CHART, ...setFlags({ ...REQUIRED, 'tracing.endpoint': 'grpc://collector:4317' })])).to.include("at '/tracing/endpoint'");
    expect(await helmFails(helm, ['template', 'tuna', CHART, ...setFlags({ ...REQUIRED, 'tracing.endpoint': 'http://user:pw@collector:4318/v1/traces' })])).to.include("at '/tracing/endpoint'");
    expect(await helmFails(helm, ['template', 'tuna', CHART, ...setFlags({ ...REQUIRED, 'tracing.sample': 2 })])).to.include("at '/tracing/sample'");
  });

  it('renders the uninstall hook only with a cluster id: a post-delete Job running tuna release --cluster-id with copies of the key and CA', async () => {
    expect(defaults.filter((o) => o.kind === 'Job'), 'no cluster id and no cluster to look up: no hook').to.deep.equal([]);
    const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----';
    const objects = await helmTemplate(helm, { ...REQUIRED, clusterId: 'prod-eu', 'edge.caBundle': pem, 'uninstall.settleSeconds': 5 });
    const hooks = objects.filter((o) => o.metadata.annotations?.['helm.sh/hook'] !== undefined);
    expect(hooks.map((o) => `${o.kind}/${o.metadata.name}`)).to.deep.equal(['Secret/tuna-operator-uninstall', 'Job/tuna-operator-uninstall']);
    for (const hook of hooks) expect(hook.metadata.annotations?.['helm.sh/hook']).to.equal('post-delete');
    const secret = hooks[0] as KubeObject & { data: Record<string, string> };
    expect(Buffer.from(secret.data.apiKey!, 'base64').toString()).to.equal('tuna_ak_test');
    expect(Buffer.from(secret.data['ca.crt']!, 'base64').toString()).to.equal(pem);
    const pod = (hooks[1]!.spec as { template: { spec: PodSpec & { automountServiceAccountToken: boolean } } }).template.spec;
    expect(pod.automountServiceAccountToken).to.equal(false);
    expect(pod.securityContext).to.deep.include({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    expect(pod.containers[0]!.args).to.deep.equal(['release', '--cluster-id=prod-eu', '--edge=edge.example.com:7443', '--api-key-file=/var/run/tuna/credentials/apiKey', '--ca=/etc/tuna/edge-ca/ca.crt', '--settle=5']);
    const off = await helmTemplate(helm, { ...REQUIRED, clusterId: 'prod-eu', 'uninstall.releaseAtEdge': false });
    expect(off.filter((o) => o.kind === 'Job')).to.deep.equal([]);
  });

  it('refuses a missing edge address or API key, and a wrong value, naming it', async () => {
    const template = ['template', 'tuna', CHART];
    expect(await helmFails(helm, [...template, ...setFlags({ 'credentials.apiKey': 'tuna_ak_x' })])).to.include('edge.address is required');
    expect(await helmFails(helm, [...template, ...setFlags({ 'edge.address': 'e:1' })])).to.include('set credentials.apiKey');
    expect(await helmFails(helm, [...template, ...setFlags({ ...REQUIRED, 'credentials.apiKey': 'tuna_tk_tunnelkey' })])).to.include('/credentials/apiKey');
    expect(await helmFails(helm, [...template, ...setFlags({ ...REQUIRED, 'edge.address': 'https://edge' })])).to.include('/edge/address');
    expect(await helmFails(helm, [...template, ...setFlags({ ...REQUIRED, replica: 2 })])).to.include("additional properties 'replica' not allowed");
  });

  it('documents every value: a comment in values.yaml, a property in values.schema.json, a row in docs/install.md', () => {
    const doc = parseDocument(readFileSync(join(CHART, 'values.yaml'), 'utf8'));
    const schema = JSON.parse(readFileSync(join(CHART, 'values.schema.json'), 'utf8')) as { properties: Record<string, unknown> };
    const install = readFileSync(repo('docs/install.md'), 'utf8');
    // each leaf value with the comment above its key (yaml keeps the comment above the first key
    // of a nested map on that map)
    const leaves = (map: YAMLMap, prefix = ''): { path: string; comment: string }[] =>
      map.items.flatMap((pair, i) => {
        const key = String((pair.key as Scalar).value);
        const comment = (pair.key as Scalar).commentBefore ?? (i === 0 && prefix !== '' ? (map.commentBefore ?? '') : '');
        const value = pair.value;
        if (isMap(value) && value.items.length > 0 && key !== 'resources') return leaves(value, `${prefix}${key}.`);
        return [{ path: `${prefix}${key}`, comment }];
      });
    const all = leaves(doc.contents as YAMLMap);
    expect(all.length).to.be.greaterThan(30);
    for (const { path, comment } of all) {
      expect(comment, `${path} has a comment in values.yaml`).to.match(/^ ?-- \S/m);
      let node: { properties?: Record<string, unknown> } | undefined = schema;
      for (const part of path.split('.')) node = node?.properties?.[part] as typeof node;
      expect(node, `${path} in values.schema.json`).to.not.equal(undefined);
      expect(install, `${path} in docs/install.md`).to.include(`| \`${path}\` |`);
    }
  });
});
