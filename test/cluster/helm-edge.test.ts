// helm-edge.test.ts — the proof of charts/tuna-edge: `helm install` into the test
// cluster with the edge image hack/image.sh built from this checkout (pulled by the test kubelet
// from the cluster's loopback registry), in a namespace that enforces the `restricted` Pod Security
// level; the bootstrap docs/install.md gives (`tuna edge init` inside the pod, then an account, its
// `reservations` key, a reservation and a tunnel key through the control API); an agent on the host
// (`tuna http`, in-process) publishes a local app through the edge pod, reached by its pod IP on the
// pods' bridge; a second release serves its tunnel and public HTTPS listeners with the certificates
// of kubernetes.io/tls Secrets; and `helm uninstall` removes every object of the release.
//
// The store is SQLite on an emptyDir (persistence.enabled=false): the test cluster runs no volume
// controller or provisioner, so a PersistentVolumeClaim would stay Pending, and the test kubelet
// mounts only Secret, ConfigMap, downward API, projected, emptyDir and hostPath volumes
// (test/support/kubelet/pod-volumes.ts). The claim the chart makes by default is checked by
// edge-chart.test.ts (server-side dry-run) only. The test kubelet has no exec endpoint either:
// pod-exec.ts does what `kubectl exec` does (enter the container's namespaces as its user).
import { expect } from 'chai';
import { X509Certificate } from 'node:crypto';
import { createServer, request } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { TLSSocket } from 'node:tls';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import type { KubeConfig, V1Pod } from '@kubernetes/client-node';
import { startCli } from '../support/backend-cli.js';
import { selfSignedCertificate } from '../support/tunnel-certs.js';
import type { CliRun } from '../support/backend-cli.js';
import { EDGE_CHART, ensureHelm, runHelm, setFlags } from '../support/helm.js';
import { clusterConfig, waitFor } from './cluster-env.js';
import { execInContainer, findContainerProcess } from './pod-exec.js';
import { pushTunaImage, type PushedImage } from './tuna-image.js';

const BASE_DOMAIN = 'edge.test';
const SELECTOR = 'app.kubernetes.io/instance=edge,app.kubernetes.io/component=edge';

/** get sends one GET to address:port with a Host header. */
function get(address: string, port: number, host: string, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    const req = request({ host: address, port, path, headers: { host }, agent: false, timeout: 10_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve({ status: 0, body: '' }));
    req.end();
  });
}

/** tlsGet sends one GET over TLS to address:port with SNI and Host `name`, trusting `ca`; it resolves with the status and the certificate's SHA-256 fingerprint. */
function tlsGet(address: string, port: number, name: string, ca: string, path: string): Promise<{ status: number; fingerprint: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ host: address, port, path, servername: name, ca, headers: { host: name }, agent: false, timeout: 10_000 }, (res) => {
      const fingerprint = (res.socket as TLSSocket).getPeerCertificate().fingerprint256;
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, fingerprint }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

/** cliJson runs one `tuna` control command in-process with --json and returns its parsed answer. */
async function cliJson<T>(argv: string[]): Promise<T> {
  const ran = startCli([...argv, '--json']);
  const code = await ran.exit;
  if (code !== 0) throw new Error(`tuna ${argv[0]} ${argv[1] ?? ''} exited ${code}: ${ran.err.join('\n')}`);
  return JSON.parse(ran.out.join('\n')) as T;
}

describe('helm install charts/tuna-edge: the edge as a pod of the cluster, from its image, serving an agent on the host', function () {
  this.timeout(900_000);
  const namespace = `tuna-edge-helm-${process.pid}`;
  const host = `app-${process.pid}.${BASE_DOMAIN}`;
  let config: KubeConfig;
  let core: CoreV1Api;
  let helm: string;
  let image: PushedImage;
  let app: Server;
  let agent: CliRun | undefined;
  let pod: V1Pod;
  let podIp = '';
  let edgeAddress = '';
  let installedAt = 0;
  let adminKey = '';
  let reservationsKey = '';
  const figures: string[] = [];

  const edgePods = async (): Promise<V1Pod[]> => (await core.listNamespacedPod({ namespace, labelSelector: SELECTOR })).items;
  const isReady = (p: V1Pod) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;

  before(async () => {
    config = clusterConfig();
    core = config.makeApiClient(CoreV1Api);
    helm = await ensureHelm();
    image = await pushTunaImage(`edge-${process.pid}`, 'edge');
    figures.push(`image: ${image.summary}`);
    app = createServer((req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end(`hello from the host app: ${req.url} for ${req.headers.host}`));
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    await core.createNamespace({
      body: { metadata: { name: namespace, labels: { 'pod-security.kubernetes.io/enforce': 'restricted', 'pod-security.kubernetes.io/enforce-version': 'latest' } } },
    });
    await waitFor('default ServiceAccount', 30_000, () => core.readNamespacedServiceAccount({ name: 'default', namespace }));
    installedAt = Date.now();
    await runHelm(helm, [
      'install', 'edge', EDGE_CHART, '--namespace', namespace,
      ...setFlags({
        'image.repository': image.repository,
        'image.tag': image.tag,
        baseDomain: BASE_DOMAIN,
        'persistence.enabled': false,
        'tls.tunnel.insecurePlaintext': true,
        logFormat: 'text',
      }),
    ]);
  });

  after(async () => {
    if (figures.length > 0) console.log(`      figures:\n${figures.map((f) => `        ${f}`).join('\n')}`);
    agent?.stop();
    await agent?.exit.catch(() => 0);
    if (helm !== undefined) await runHelm(helm, ['uninstall', 'edge', '--namespace', namespace, '--wait']).catch(() => undefined);
    await core?.deleteNamespace({ name: namespace }).catch(() => undefined);
    await new Promise((resolve) => app?.close(resolve));
  });

  it('runs the edge as one ready pod, admitted under the restricted level, from the registry image', async () => {
    pod = await waitFor('a ready edge pod', 300_000, async () => {
      const list = await edgePods();
      return list.length === 1 && isReady(list[0]!) ? list[0] : undefined;
    }, 500);
    figures.push(`helm install → edge pod ready: ${((Date.now() - installedAt) / 1000).toFixed(1)} s`);
    expect(pod.spec?.containers[0]?.image).to.equal(image.reference);
    expect(pod.status?.containerStatuses?.[0]?.imageID).to.match(/@sha256:[0-9a-f]{64}$/);
    expect(pod.spec?.securityContext).to.deep.include({ runAsNonRoot: true, runAsUser: 65532 });
    podIp = pod.status?.podIP ?? '';
    expect(podIp).to.match(/^198\.1[89]\./);
    edgeAddress = `tcp://${podIp}:7443`;
    // the readiness probe's target, from the host
    expect(await get(podIp, 9100, 'x', '/healthz')).to.deep.equal({ status: 200, body: 'ok\n' });
  });

  it('gives the first admin key with tuna edge init inside the pod, once, and then an account and its reservations key', async () => {
    const pid = await findContainerProcess(pod.metadata?.uid ?? '', (argv) => argv.includes('/app/dist/cli/main.js') && argv.includes('edge') && argv.includes('--config=/etc/tuna/config/edge.yaml'));
    // kubectl exec -n NS deploy/edge -- node /app/dist/cli/main.js edge init --store /var/lib/tuna/edge.db (docs/install.md)
    const init = ['node', '/app/dist/cli/main.js', 'edge', 'init', '--store', '/var/lib/tuna/edge.db', '--json'];
    const first = await execInContainer(pid, init, '/usr/local/bin');
    const created = JSON.parse(first.stdout) as { account: { id: string }; token: string; apiKey: { scopes: string[] } };
    expect(created.apiKey.scopes).to.deep.equal(['admin']);
    adminKey = created.token;
    expect(adminKey).to.match(/^tuna_ak_/);
    const again = await execInContainer(pid, init, '/usr/local/bin').then(
      () => 'succeeded',
      (err: { stderr?: string }) => err.stderr ?? '',
    );
    expect(again, 'a second init is refused').to.match(/the store already has accounts; nothing was changed/);

    const control = ['--edge', edgeAddress, '--api-key', adminKey];
    const account = await cliJson<{ id: string; name: string }>(['accounts', 'create', 'team-a', ...control]);
    expect(account.name).to.equal('team-a');
    const minted = await cliJson<{ apiKey: { scopes: string[] }; token: string }>(['keys', 'create', '--account', account.id, '--scope', 'reservations', ...control]);
    expect(minted.apiKey.scopes).to.deep.equal(['reservations']);
    reservationsKey = minted.token;
  });

  it('publishes a local app through the edge pod: the public port answers 200 from the app for the Host', async () => {
    const control = ['--edge', edgeAddress, '--api-key', reservationsKey];
    const reserved = await cliJson<{ reservation: { id: string } }>(['reserve', 'domain', host, ...control]);
    const tunnelKey = await cliJson<{ token: string }>(['keys', 'create', '--tunnel', '--reservation', reserved.reservation.id, '--protocol', 'http', ...control]);
    const port = (app.address() as AddressInfo).port;
    agent = startCli(['http', String(port), '--host', host, '--edge', edgeAddress], { TUNA_KEY: tunnelKey.token });
    await agent.waitForOut(`Forwarding ${host}`, 60_000);
    const answer = await waitFor('200 through the edge pod', 60_000, async () => {
      const got = await get(podIp, 8080, host, '/hello');
      return got.status === 200 ? got : undefined;
    });
    expect(answer.body).to.equal(`hello from the host app: /hello for ${host}`);
    figures.push(`helm install → first 200 through the in-cluster edge: ${((Date.now() - installedAt) / 1000).toFixed(1)} s`);
    const other = await get(podIp, 8080, `other.${BASE_DOMAIN}`, '/hello');
    expect(other.status, 'a host nobody reserved').to.not.equal(200);
  });

  it('serves the tunnel listener and public HTTPS with the certificates of kubernetes.io/tls Secrets', async () => {
    const tunnelName = `tunnel.${BASE_DOMAIN}`;
    const tunnelCert = selfSignedCertificate([tunnelName]);
    const wildcard = selfSignedCertificate([`*.${BASE_DOMAIN}`]);
    for (const [name, cert] of [['edge-tunnel-tls', tunnelCert], ['wildcard-tls', wildcard]] as const) {
      await core.createNamespacedSecret({ namespace, body: { metadata: { name }, type: 'kubernetes.io/tls', stringData: { 'tls.crt': cert.cert, 'tls.key': cert.key } } });
    }
    await runHelm(helm, [
      'install', 'edge-tls', EDGE_CHART, '--namespace', namespace,
      ...setFlags({
        'image.repository': image.repository,
        'image.tag': image.tag,
        baseDomain: BASE_DOMAIN,
        'persistence.enabled': false,
        'tls.tunnel.secretName': 'edge-tunnel-tls',
        'listen.https.enabled': true,
        'tls.certificates[0].secretName': 'wildcard-tls',
        'tls.certificates[0].hostnames[0]': `*.${BASE_DOMAIN}`,
      }),
    ]);
    try {
      const tlsPod = await waitFor('a ready edge-tls pod', 300_000, async () => {
        const list = (await core.listNamespacedPod({ namespace, labelSelector: 'app.kubernetes.io/instance=edge-tls' })).items;
        return list.length === 1 && isReady(list[0]!) ? list[0] : undefined;
      }, 500);
      const ip = tlsPod.status?.podIP ?? '';
      // the tunnel listener's /healthz over TLS, verified against the Secret's certificate and name
      const tunnel = await tlsGet(ip, 7443, tunnelName, tunnelCert.cert, '/healthz');
      expect(tunnel).to.deep.equal({ status: 200, fingerprint: new X509Certificate(tunnelCert.cert).fingerprint256 });
      // public HTTPS: the wildcard for a name under the base domain (no binding holds it: not 200)
      const https = await tlsGet(ip, 8443, `nobody.${BASE_DOMAIN}`, wildcard.cert, '/');
      expect(https.fingerprint).to.equal(new X509Certificate(wildcard.cert).fingerprint256);
      expect(https.status).to.not.equal(200);
    } finally {
      await runHelm(helm, ['uninstall', 'edge-tls', '--namespace', namespace, '--wait', '--timeout', '3m']);
    }
  });

  it('uninstalls: the pod, the Deployment, the ConfigMap and both Services are gone', async () => {
    agent?.stop();
    expect(await agent?.exit).to.equal(0);
    agent = undefined;
    await runHelm(helm, ['uninstall', 'edge', '--namespace', namespace, '--wait', '--timeout', '3m']);
    await waitFor('no edge pod', 120_000, async () => ((await edgePods()).length === 0 ? true : undefined));
    expect((await config.makeApiClient(AppsV1Api).listNamespacedDeployment({ namespace })).items).to.deep.equal([]);
    expect((await core.listNamespacedService({ namespace })).items).to.deep.equal([]);
    expect((await core.listNamespacedConfigMap({ namespace })).items.map((c) => c.metadata?.name)).to.deep.equal(['kube-root-ca.crt']);
    expect((await get(podIp, 8080, host, '/hello')).status).to.equal(0);
  });
});
