// chart-dry-run.test.ts — charts/tuna against the test cluster's apiserver: every rendered object
// (CRDs included) passes a server-side dry-run apply into a namespace that enforces the
// `restricted` Pod Security level, and a Pod made from the chart's pod template is admitted there
// while the same Pod without its security context is refused (so the admission is really on).
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { CoreV1Api } from '@kubernetes/client-node';
import type { KubeConfig } from '@kubernetes/client-node';
import { CHART, ensureHelm, parseManifests, runHelm, setFlags } from '../support/helm.js';
import { clusterConfig, runScript, waitFor } from './cluster-env.js';

const run = promisify(execFile);

describe('charts/tuna on the test cluster (server-side dry-run)', function () {
  this.timeout(600_000);
  const namespace = `tuna-chart-${process.pid}`;
  let admin: KubeConfig;
  let kubectl: string;
  let work: string;
  let rendered: string;
  let gatewayApi: boolean;

  const kube = (args: string[]) => run(kubectl, ['--kubeconfig', process.env.KUBECONFIG!, ...args], { timeout: 60_000, maxBuffer: 16 << 20 });

  before(async () => {
    admin = clusterConfig();
    const helm = await ensureHelm();
    kubectl = `${/TUNA_K8S_BIN=(\S+)/.exec(await runScript('hack/cluster/build.sh', 60_000))?.[1]}/kubectl`;
    const core = admin.makeApiClient(CoreV1Api);
    await core.createNamespace({
      body: { metadata: { name: namespace, labels: { 'pod-security.kubernetes.io/enforce': 'restricted', 'pod-security.kubernetes.io/enforce-version': 'latest' } } },
    });
    // Pods need their ServiceAccount (ServiceAccount admission); a dry-run creates none.
    await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: 'tuna-operator' } } });
    await waitFor('the namespace default ServiceAccount', 30_000, () => core.readNamespacedServiceAccount({ name: 'default', namespace }));
    gatewayApi = await kube(['get', '--raw', '/apis/gateway.networking.k8s.io/v1']).then(
      () => true,
      () => false,
    );
    const values = setFlags({ 'edge.address': 'edge.example.com:7443', 'credentials.apiKey': 'tuna_ak_dryrun', 'ingressClass.default': true });
    const extra = gatewayApi ? ['--api-versions', 'gateway.networking.k8s.io/v1/GatewayClass'] : [];
    rendered = await runHelm(helm, ['template', 'tuna', CHART, '--namespace', namespace, '--include-crds', ...values, ...extra]);
    work = mkdtempSync(path.join(tmpdir(), 'tuna-chart-dry-run-'));
  });

  after(async () => {
    await admin.makeApiClient(CoreV1Api).deleteNamespace({ name: namespace }).catch(() => undefined);
    if (work !== undefined) rmSync(work, { recursive: true, force: true });
  });

  it('applies every rendered object with kubectl apply --dry-run=server, with no Pod Security warning', async () => {
    const file = path.join(work, 'chart.yaml');
    writeFileSync(file, rendered);
    const { stdout, stderr } = await kube(['apply', '--dry-run=server', '-f', file]);
    const objects = parseManifests(rendered);
    expect(stdout.trim().split('\n')).to.have.length(objects.length);
    for (const line of stdout.trim().split('\n')) expect(line).to.match(/ (created|configured|unchanged) \(server dry run\)$/);
    for (const kind of ['customresourcedefinition', 'deployment.apps', 'poddisruptionbudget.policy', 'clusterrole.rbac', 'role.rbac', 'secret', 'ingressclass.networking.k8s.io'])
      expect(stdout, kind).to.include(kind);
    if (gatewayApi) expect(stdout).to.include('gatewayclass.gateway.networking.k8s.io/tuna');
    expect(stderr).to.not.match(/PodSecurity/);
  });

  it('has a pod template the restricted level admits, and the admission refuses it without its security context', async () => {
    const deployment = parseManifests(rendered).find((o) => o.kind === 'Deployment') as { spec: { template: { metadata: object; spec: Record<string, unknown> } } } | undefined;
    expect(deployment).to.not.equal(undefined);
    const template = deployment!.spec.template;
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { ...template.metadata, name: 'tuna-operator-admission', namespace }, spec: template.spec };
    const file = path.join(work, 'pod.json');
    writeFileSync(file, JSON.stringify(pod));
    const admitted = await kube(['create', '--dry-run=server', '-f', file]);
    expect(admitted.stdout).to.include('pod/tuna-operator-admission created (server dry run)');

    const containers = (template.spec.containers as Record<string, unknown>[]).map((c) => ({ ...c, securityContext: undefined }));
    writeFileSync(file, JSON.stringify({ ...pod, spec: { ...template.spec, securityContext: undefined, containers } }));
    const refused = await kube(['create', '--dry-run=server', '-f', file]).then(
      () => 'admitted',
      (err: { stderr?: string }) => err.stderr ?? String(err),
    );
    expect(refused).to.match(/violates PodSecurity "restricted:latest"/);
  });
});
