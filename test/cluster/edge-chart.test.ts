// edge-chart.test.ts — charts/tuna-edge: helm lint, helm template of the SQLite
// and the PostgreSQL shapes (the rendered config file decoded by the edge's own codec), the values
// the chart refuses with a message naming the value, and a server-side dry-run apply of every
// rendered object into a namespace that enforces the `restricted` Pod Security level.
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { isMap, parse as parseYaml, parseDocument } from 'yaml';
import type { Scalar, YAMLMap } from 'yaml';
import { CoreV1Api } from '@kubernetes/client-node';
import type { KubeConfig } from '@kubernetes/client-node';
import { decodeEdgeConfig } from '../../src/edge/index.js';
import type { EdgeConfigFile } from '../../src/edge/index.js';
import { EDGE_CHART, ensureHelm, helmFails, parseManifests, runHelm, setFlags } from '../support/helm.js';
import type { KubeObject } from '../support/helm.js';
import { clusterConfig, runScript, waitFor } from './cluster-env.js';

const run = promisify(execFile);

/** SQLITE is the smallest install: SQLite on a claim, a TLS tunnel listener. */
const SQLITE = { baseDomain: 'tuna.example.com', 'tls.tunnel.secretName': 'edge-tunnel-tls' };

/** POSTGRES sets every value a several-pod PostgreSQL edge uses. */
const POSTGRES = {
  baseDomain: 'tuna.example.com',
  replicas: 3,
  'listen.https.enabled': true,
  'tls.tunnel.secretName': 'edge-tunnel-tls',
  'tls.certificates[0].secretName': 'wildcard-tls',
  'tls.certificates[0].hostnames[0]': '*.tuna.example.com',
  'store.postgres.url': 'postgres://tuna@db.internal:5432/tuna',
  'store.postgres.schema': 'edge_eu',
  'store.postgres.passwordSecret': 'edge-db',
  'store.portPool.first': 20000,
  'store.portPool.last': 20004,
  'store.addressPool': '203.0.113.16/28',
  'store.quotas.reservations': 10,
  'limits.maxRequestBodyBytes': 1048576,
  'acme.enabled': true,
  'acme.contact[0]': 'mailto:ops@example.com',
  'service.tunnel.type': 'NodePort',
  'service.tunnel.nodePort': 30743,
  'service.public.type': 'NodePort',
  'service.public.portPoolPorts': true,
  'service.public.externalTrafficPolicy': 'Local',
};

type PodSpec = { securityContext: Record<string, unknown>; containers: Record<string, unknown>[]; volumes: Record<string, unknown>[]; automountServiceAccountToken: boolean };
type Deployment = KubeObject & { spec: { replicas: number; strategy: { type: string }; template: { metadata: object; spec: PodSpec } } };

const find = <T extends KubeObject>(objects: KubeObject[], kind: string, suffix = ''): T => {
  const found = objects.find((o) => o.kind === kind && o.metadata.name.endsWith(suffix));
  if (found === undefined) throw new Error(`no ${kind} *${suffix} rendered`);
  return found as T;
};

/** edgeConfig decodes the rendered ConfigMap's edge.yaml with the edge's own codec (it throws on a field the edge refuses). */
const edgeConfig = (objects: KubeObject[]): EdgeConfigFile => decodeEdgeConfig(parseYaml((find(objects, 'ConfigMap') as KubeObject & { data: { 'edge.yaml': string } }).data['edge.yaml']));

describe('charts/tuna-edge: lint, template, refusals, and a server-side dry-run on the test cluster', function () {
  this.timeout(600_000);
  const namespace = `tuna-edge-chart-${process.pid}`;
  let helm: string;
  let admin: KubeConfig;
  let kubectl: string;
  let work = '';

  const template = async (set: Record<string, string | number | boolean>, ns = namespace) =>
    parseManifests(await runHelm(helm, ['template', 'edge', EDGE_CHART, '--namespace', ns, ...setFlags(set)]));
  const kube = (args: string[]) => run(kubectl, ['--kubeconfig', process.env.KUBECONFIG!, ...args], { timeout: 60_000, maxBuffer: 16 << 20 });

  before(async () => {
    helm = await ensureHelm();
    admin = clusterConfig();
    kubectl = `${/TUNA_K8S_BIN=(\S+)/.exec(await runScript('hack/cluster/build.sh', 60_000))?.[1]}/kubectl`;
    const core = admin.makeApiClient(CoreV1Api);
    await core.createNamespace({
      body: { metadata: { name: namespace, labels: { 'pod-security.kubernetes.io/enforce': 'restricted', 'pod-security.kubernetes.io/enforce-version': 'latest' } } },
    });
    await waitFor('the namespace default ServiceAccount', 30_000, () => core.readNamespacedServiceAccount({ name: 'default', namespace }));
    work = mkdtempSync(path.join(tmpdir(), 'tuna-edge-chart-'));
  });

  after(async () => {
    await admin?.makeApiClient(CoreV1Api).deleteNamespace({ name: namespace }).catch(() => undefined);
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('passes helm lint, and helm lint --strict with every option set', async () => {
    expect(await runHelm(helm, ['lint', EDGE_CHART, ...setFlags(SQLITE)])).to.include('0 chart(s) failed');
    expect(await runHelm(helm, ['lint', '--strict', EDGE_CHART, ...setFlags(POSTGRES)])).to.include('0 chart(s) failed');
  });

  it('renders SQLite as one pod on a claim, restarted by Recreate, its config accepted by the edge', async () => {
    const objects = await template(SQLITE);
    const deployment = find<Deployment>(objects, 'Deployment');
    expect(deployment.spec.replicas).to.equal(1);
    expect(deployment.spec.strategy.type).to.equal('Recreate');
    const claim = find(objects, 'PersistentVolumeClaim', '-data');
    expect(claim.metadata.annotations).to.deep.include({ 'helm.sh/resource-policy': 'keep' });
    const pod = deployment.spec.template.spec;
    expect(pod.volumes).to.deep.include({ name: 'data', persistentVolumeClaim: { claimName: claim.metadata.name } });
    expect(pod.automountServiceAccountToken).to.equal(false);
    expect(pod.securityContext).to.deep.include({ runAsNonRoot: true, runAsUser: 65532, fsGroup: 65532, seccompProfile: { type: 'RuntimeDefault' } });
    const container = pod.containers[0]!;
    expect(container.args).to.deep.equal(['edge', '--config=/etc/tuna/config/edge.yaml', '--log-format=json']);
    expect(container.securityContext).to.deep.equal({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, runAsNonRoot: true, capabilities: { drop: ['ALL'] }, seccompProfile: { type: 'RuntimeDefault' } });
    expect(container.readinessProbe).to.deep.include({ httpGet: { path: '/healthz', port: 'metrics' } });
    expect(container.livenessProbe).to.deep.include({ httpGet: { path: '/healthz', port: 'metrics' } });
    expect(container.volumeMounts).to.deep.include({ name: 'tls-tunnel', mountPath: '/etc/tuna/tls/tunnel', readOnly: true });
    expect(container.env).to.equal(undefined);
    const config = edgeConfig(objects);
    expect(config.store).to.deep.include({ url: '/var/lib/tuna/edge.db', baseDomain: 'tuna.example.com' });
    expect(config.listen.tunnel).to.deep.equal({ host: '0.0.0.0', port: 7443, tls: { certFile: '/etc/tuna/tls/tunnel/tls.crt', keyFile: '/etc/tuna/tls/tunnel/tls.key' } });
    expect(config.listen.metrics).to.deep.equal({ host: '0.0.0.0', port: 9100 });
    expect(config.listen.https).to.equal(undefined);
    const services = objects.filter((o) => o.kind === 'Service').map((s) => ({ name: s.metadata.name, spec: s.spec as { type: string; ports: { name: string; port: number }[] } }));
    expect(services.map(({ name, spec }) => [name, spec.type, spec.ports.map((p) => `${p.name}:${p.port}`)])).to.deep.equal([
      ['edge-metrics', 'ClusterIP', ['metrics:9100']],
      ['edge-tunnel', 'LoadBalancer', ['tunnel:7443']],
      ['edge-public', 'LoadBalancer', ['http:80']],
    ]);
  });

  it('renders PostgreSQL as several pods with a rolling update, the password from a Secret, the pool ports on the public Service', async () => {
    const objects = await template(POSTGRES);
    const deployment = find<Deployment>(objects, 'Deployment');
    expect(deployment.spec.replicas).to.equal(3);
    expect(deployment.spec.strategy.type).to.equal('RollingUpdate');
    // no claim (persistence.enabled is left true): pods on several nodes cannot share a ReadWriteOnce one
    expect(objects.filter((o) => o.kind === 'PersistentVolumeClaim')).to.deep.equal([]);
    expect(deployment.spec.template.spec.volumes).to.deep.include({ name: 'data', emptyDir: { sizeLimit: '1Gi' } });
    const container = deployment.spec.template.spec.containers[0]!;
    expect(container.env).to.deep.equal([{ name: 'PGPASSWORD', valueFrom: { secretKeyRef: { name: 'edge-db', key: 'password' } } }]);
    expect(container.volumeMounts).to.deep.include({ name: 'tls-wildcard-tls', mountPath: '/etc/tuna/tls/wildcard-tls', readOnly: true });
    const config = edgeConfig(objects);
    expect(config.store).to.deep.include({ url: 'postgres://tuna@db.internal:5432/tuna', schema: 'edge_eu', portPool: { first: 20000, last: 20004 }, addressPool: '203.0.113.16/28', quotas: { reservations: 10 } });
    expect(config.certificates).to.deep.equal([{ hostnames: ['*.tuna.example.com'], certFile: '/etc/tuna/tls/wildcard-tls/tls.crt', keyFile: '/etc/tuna/tls/wildcard-tls/tls.key' }]);
    expect(config.acme).to.deep.include({ accountKeyFile: '/var/lib/tuna/acme-account.pem', contact: ['mailto:ops@example.com'] });
    expect(config.limits).to.deep.equal({ maxRequestBodyBytes: 1048576 });
    const publicService = find(objects, 'Service', '-public') as KubeObject & { spec: { type: string; externalTrafficPolicy: string; ports: { name: string; port: number }[] } };
    expect(publicService.spec.type).to.equal('NodePort');
    expect(publicService.spec.externalTrafficPolicy).to.equal('Local');
    expect(publicService.spec.ports.map((p) => p.name)).to.deep.equal(['http', 'https', 'tcp-20000', 'tcp-20001', 'tcp-20002', 'tcp-20003', 'tcp-20004']);
    const tunnelService = find(objects, 'Service', '-tunnel') as KubeObject & { spec: { ports: { nodePort?: number }[] } };
    expect(tunnelService.spec.ports[0]?.nodePort).to.equal(30743);
  });

  const refusals: [string, Record<string, string | number | boolean>, RegExp][] = [
    ['no baseDomain', { 'tls.tunnel.secretName': 'x' }, /baseDomain is required/],
    ['replicas > 1 on SQLite', { ...SQLITE, replicas: 2 }, /replicas: 2 edge pods need a shared store: set store\.postgres\.url/],
    ['no tunnel certificate and no plaintext opt-in', { baseDomain: 'tuna.example.com' }, /tls\.tunnel\.secretName is required/],
    ['a password in the PostgreSQL URL', { ...SQLITE, 'store.postgres.url': 'postgres://tuna:hunter2@db:5432/tuna' }, /store\.postgres\.url holds a password/],
    ['ACME without HTTPS', { ...SQLITE, 'acme.enabled': true }, /acme\.enabled needs listen\.https\.enabled/],
    ['no public listener', { ...SQLITE, 'listen.http.enabled': false }, /enable listen\.http or listen\.https/],
    ['pool ports without a pool', { ...SQLITE, 'service.public.portPoolPorts': true }, /portPoolPorts needs store\.portPool/],
    ['a pool of 101 ports on the Service', { ...SQLITE, 'store.portPool.first': 20000, 'store.portPool.last': 20100, 'service.public.portPoolPorts': true }, /more than 100 ports/],
    ['an unknown value', { ...SQLITE, replica: 2 }, /additional properties 'replica' not allowed/],
    ['a Service type', { ...SQLITE, 'service.tunnel.type': 'External' }, /\/service\/tunnel\/type': value must be one of 'LoadBalancer', 'NodePort', 'ClusterIP'/],
    ['replicas 0', { ...SQLITE, replicas: 0 }, /\/replicas': minimum: got 0, want 1/],
    ['a privileged listener port', { ...SQLITE, 'listen.http.port': 80 }, /\/listen\/http\/port': minimum: got 80, want 1,?024/],
    ['a non-postgres URL', { ...SQLITE, 'store.postgres.url': 'mysql://db/tuna' }, /\/store\/postgres\/url': .*does not match pattern/],
    ['an address pool that is not a CIDR', { ...SQLITE, 'store.addressPool': '203.0.113.0' }, /\/store\/addressPool': .*does not match pattern/],
    ['a pool with only its first port', { ...SQLITE, 'store.portPool.first': 20000 }, /\/store\/portPool'/],
  ];
  for (const [what, set, message] of refusals) {
    it(`refuses ${what} with a message naming the value`, async () => {
      const err = await helmFails(helm, ['template', 'edge', EDGE_CHART, ...setFlags(set)]);
      expect(err).to.match(message);
    });
  }

  for (const [shape, set] of [['SQLite', SQLITE], ['PostgreSQL', POSTGRES]] as const) {
    it(`applies every object of the ${shape} shape with kubectl apply --dry-run=server under restricted, with no Pod Security warning`, async () => {
      const rendered = await runHelm(helm, ['template', 'edge', EDGE_CHART, '--namespace', namespace, ...setFlags(set)]);
      const file = path.join(work, `${shape}.yaml`);
      writeFileSync(file, rendered);
      const { stdout, stderr } = await kube(['apply', '--dry-run=server', '-f', file]);
      const lines = stdout.trim().split('\n');
      expect(lines).to.have.length(parseManifests(rendered).length);
      for (const line of lines) expect(line).to.match(/ (created|configured|unchanged) \(server dry run\)$/);
      expect(stdout).to.include('deployment.apps/edge created');
      expect(stdout).to.include('service/edge-tunnel created');
      expect(stderr).to.not.match(/PodSecurity/);
    });
  }

  it('documents every value: a comment in values.yaml, a property in values.schema.json, a row in docs/install.md', () => {
    const doc = parseDocument(readFileSync(path.join(EDGE_CHART, 'values.yaml'), 'utf8'));
    const schema = JSON.parse(readFileSync(path.join(EDGE_CHART, 'values.schema.json'), 'utf8')) as { properties: Record<string, unknown> };
    const install = readFileSync(path.join(EDGE_CHART, '../../docs/install.md'), 'utf8');
    const table = install.slice(install.indexOf('### Values of `charts/tuna-edge`'), install.indexOf('## The chart: `charts/tuna`'));
    // each leaf value with the comment above its key (yaml keeps the comment above the first key of a nested map on that map)
    const leaves = (map: YAMLMap, prefix = ''): { path: string; comment: string }[] =>
      map.items.flatMap((pair, i) => {
        const key = String((pair.key as Scalar).value);
        const comment = (pair.key as Scalar).commentBefore ?? (i === 0 && prefix !== '' ? (map.commentBefore ?? '') : '');
        if (isMap(pair.value) && pair.value.items.length > 0 && key !== 'resources') return leaves(pair.value, `${prefix}${key}.`);
        return [{ path: `${prefix}${key}`, comment }];
      });
    const all = leaves(doc.contents as YAMLMap);
    expect(all.length).to.be.greaterThan(50);
    for (const { path: value, comment } of all) {
      expect(comment, `${value} has a comment in values.yaml`).to.match(/^ ?-- \S/m);
      let node: { properties?: Record<string, unknown> } | undefined = schema;
      for (const part of value.split('.')) node = node?.properties?.[part] as { properties?: Record<string, unknown> } | undefined;
      expect(node, `${value} in values.schema.json`).to.not.equal(undefined);
      expect(table, `${value} in docs/install.md`).to.include(`| \`${value}\` |`);
    }
  });

  it('has a pod template the restricted level admits, and the admission refuses it without its security context', async () => {
    const deployment = find<Deployment>(await template(SQLITE), 'Deployment');
    const spec = deployment.spec.template.spec;
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { ...deployment.spec.template.metadata, name: 'tuna-edge-admission', namespace }, spec };
    const file = path.join(work, 'pod.json');
    writeFileSync(file, JSON.stringify(pod));
    expect((await kube(['create', '--dry-run=server', '-f', file])).stdout).to.include('pod/tuna-edge-admission created (server dry run)');
    const containers = spec.containers.map((c) => ({ ...c, securityContext: undefined }));
    writeFileSync(file, JSON.stringify({ ...pod, spec: { ...spec, securityContext: undefined, containers } }));
    const refused = await kube(['create', '--dry-run=server', '-f', file]).then(
      () => 'admitted',
      (err: { stderr?: string }) => err.stderr ?? String(err),
    );
    expect(refused).to.match(/violates PodSecurity "restricted:latest"/);
  });
});
