// conformance-base.test.ts — our kubelet runs what the Gateway API conformance suite's base
// manifests deploy: every pod Ready, every Service port answering on every pod it selects, the TLS
// backends serving the Secrets' certificates, and the coredns image run by our DNS stand-in, which
// answers whoami for foo.bar.com and REFUSES the names coredns would forward to 8.8.8.8.
//
// The manifests are read at test time from the conformance Go module (`go mod download`), never
// copied here. Their three namespaces are renamed (the suite may have left its own in the cluster);
// the Gateways are left out (they need a GatewayClass and an implementation, not a kubelet).
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { promisify } from 'node:util';
import { CoreV1Api, KubernetesObjectApi, type KubernetesObject, type V1Deployment, type V1Pod, type V1Service } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { makeSelfSigned } from '../support/backend-tls.js';
import { queryDns } from '../support/kubelet/dns-client.js';
import { DNS_TYPE, RCODE } from '../support/kubelet/dns-wire.js';
import { clusterConfig, REPO_ROOT, waitFor } from './cluster-env.js';

const run = promisify(execFile);

/** conformanceModuleDir downloads (or finds in the module cache) the conformance module of our Gateway API version. */
async function conformanceModuleDir(): Promise<string> {
  const versions = await readFile(path.join(REPO_ROOT, 'hack/cluster/versions.sh'), 'utf8');
  const version = process.env.TUNA_GATEWAY_API_VERSION ?? /TUNA_GATEWAY_API_VERSION:-([^}]+)\}/.exec(versions)?.[1];
  if (!version) throw new Error('hack/cluster/versions.sh names no TUNA_GATEWAY_API_VERSION');
  const scratch = await mkdtemp(path.join(tmpdir(), 'tuna-conformance-mod-'));
  try {
    const { stdout } = await run('go', ['mod', 'download', '-json', `sigs.k8s.io/gateway-api/conformance@v${version}`], {
      cwd: scratch,
      env: { ...process.env, GOFLAGS: '-mod=mod' },
      timeout: 300_000,
    });
    const dir = (JSON.parse(stdout) as { Dir?: string }).Dir;
    if (!dir) throw new Error(`go mod download printed no Dir: ${stdout}`);
    return dir;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

const isWorkload = (o: KubernetesObject) => ['Namespace', 'ConfigMap', 'Service', 'Deployment'].includes(o.kind ?? '') && o.apiVersion?.includes('gateway.networking') !== true;

/** tcpAccepts says whether ip:port accepts a TCP connection (pod IPs only). */
function tcpAccepts(ip: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: ip, port, timeout: 3000 });
    const finish = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => finish(true));
    socket.once('error', () => finish(false));
    socket.once('timeout', () => finish(false));
  });
}

/** peerCertificate completes a TLS handshake with ip:port and returns the server's certificate (DER). */
function peerCertificate(ip: string, port: number, servername: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: ip, port, servername, rejectUnauthorized: false, timeout: 5000 }, () => {
      const raw = socket.getPeerCertificate().raw;
      socket.destroy();
      resolve(raw);
    });
    socket.once('error', reject);
    socket.once('timeout', () => socket.destroy(new Error(`TLS to ${ip}:${port} timed out`)));
  });
}

/** getJson fetches http://ip:port/path and parses the echo server's JSON. */
function getJson(ip: string, port: number, urlPath: string): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const request = http.get({ host: ip, port, path: urlPath, timeout: 5000, agent: false }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => {
        try {
          resolve(JSON.parse(body) as Record<string, unknown>);
        } catch (error) {
          reject(error as Error);
        }
      });
    });
    request.on('timeout', () => request.destroy(new Error('timeout')));
    request.on('error', reject);
  });
}

describe('test cluster: the Gateway API conformance base manifests', function () {
  this.timeout(600_000);
  const suffix = `${process.pid}`;
  // The suite's namespace names → ours (same labels, so the Gateways' selectors would still match).
  const rename = new Map<string, string>();
  let core: CoreV1Api;
  let objects: KubernetesObjectApi;
  let workloads: KubernetesObject[] = [];
  const certificates = new Map<string, string>(); // namespace/secret → PEM certificate

  before(async () => {
    const config = clusterConfig();
    core = config.makeApiClient(CoreV1Api);
    objects = KubernetesObjectApi.makeApiClient(config);
    const text = await readFile(path.join(await conformanceModuleDir(), 'base/manifests.yaml'), 'utf8');
    const all = parseAllDocuments(text).map((doc) => doc.toJS() as KubernetesObject).filter((o) => o !== null);
    for (const o of all) if (o.kind === 'Namespace') rename.set(o.metadata?.name ?? '', `${o.metadata?.name ?? ''}-${suffix}`);
    expect([...rename.keys()]).to.have.members(['gateway-conformance-infra', 'gateway-conformance-app-backend', 'gateway-conformance-web-backend']);
    workloads = all.filter(isWorkload).map((o) => {
      const copy = structuredClone(o);
      const meta = copy.metadata ?? {};
      if (copy.kind === 'Namespace') meta.name = rename.get(meta.name ?? '');
      else meta.namespace = rename.get(meta.namespace ?? '') ?? meta.namespace;
      return copy;
    });
  });

  after(async () => {
    for (const name of rename.values()) await core.deleteNamespace({ name }).catch(() => undefined);
    await waitFor('the namespaces to go', 120_000, async () => {
      const left = (await core.listNamespace()).items.filter((n) => [...rename.values()].includes(n.metadata?.name ?? ''));
      return left.length === 0 ? true : undefined;
    }).catch(() => undefined);
  });

  it('runs every pod of the base manifests Ready, with each Service port answering on its pods', async () => {
    const deployments = workloads.filter((o): o is V1Deployment & KubernetesObject => o.kind === 'Deployment');
    const images = new Set(deployments.flatMap((d) => d.spec?.template.spec?.containers.map((c) => c.image ?? '') ?? []));
    expect([...images]).to.include('registry.k8s.io/coredns/coredns:v1.12.2');
    for (const o of workloads.filter((w) => w.kind === 'Namespace')) await objects.create(o);
    for (const namespace of rename.values()) {
      await waitFor(`default ServiceAccount in ${namespace}`, 30_000, () => core.readNamespacedServiceAccount({ name: 'default', namespace }));
    }
    // The suite creates the Secrets the Deployments mount before it applies them; so do we, from the volumes.
    for (const d of deployments) {
      const namespace = d.metadata?.namespace ?? '';
      for (const volume of d.spec?.template.spec?.volumes ?? []) {
        const name = volume.secret?.secretName;
        if (!name || certificates.has(`${namespace}/${name}`)) continue;
        const pair = makeSelfSigned('abc.example.com');
        certificates.set(`${namespace}/${name}`, pair.cert);
        await core.createNamespacedSecret({ namespace, body: { metadata: { name }, type: 'kubernetes.io/tls', stringData: { 'tls.crt': pair.cert, 'tls.key': pair.key } } });
      }
    }
    expect(certificates.size).to.be.greaterThan(1);
    for (const o of workloads.filter((w) => w.kind !== 'Namespace')) await objects.create(o);

    const expected = deployments.reduce((sum, d) => sum + (d.spec?.replicas ?? 1), 0);
    const namespaces = [...rename.values()];
    const listPods = async () => (await Promise.all(namespaces.map((namespace) => core.listNamespacedPod({ namespace })))).flatMap((l) => l.items);
    const isReady = (p: V1Pod) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
    const pods = await waitFor(`all ${expected} pods Ready`, 300_000, async () => {
      const current = await listPods();
      return current.length === expected && current.every(isReady) ? current : undefined;
    }, 1000).catch(async (error: Error) => {
      const current = await listPods();
      const waiting = current.filter((p) => !isReady(p)).map((p) => `${p.metadata?.namespace}/${p.metadata?.name}: ${JSON.stringify(p.status?.containerStatuses?.[0]?.state)}`);
      throw new Error(`${error.message}; ${current.length} pods, not ready: ${waiting.join('; ')}`);
    });
    expect(pods).to.have.length(expected);

    // Ready here means the process runs (the manifests declare no probes): check that each serves.
    const services = workloads.filter((o): o is V1Service & KubernetesObject => o.kind === 'Service');
    for (const service of services) {
      const selector = service.spec?.selector ?? {};
      const selected = pods.filter((p) => p.metadata?.namespace === service.metadata?.namespace && Object.entries(selector).every(([k, v]) => p.metadata?.labels?.[k] === v));
      expect(selected, `pods of Service ${service.metadata?.name}`).to.not.be.empty;
      for (const port of service.spec?.ports ?? []) {
        const target = typeof port.targetPort === 'number' ? port.targetPort : Number(port.targetPort ?? port.port);
        expect(Number.isInteger(target), `numeric targetPort of ${service.metadata?.name}`).to.equal(true);
        for (const pod of selected) {
          const ip = pod.status?.podIP ?? '';
          expect(ip).to.match(/^198\.1[89]\./);
          const what = `${service.metadata?.namespace}/${service.metadata?.name} port ${port.name ?? port.port} on ${pod.metadata?.name} (${ip}:${target}/${port.protocol ?? 'TCP'})`;
          if ((port.protocol ?? 'TCP') === 'UDP') {
            const exchange = await waitFor(what, 30_000, () => queryDns(ip, target, 'foo.bar.com', DNS_TYPE.A, 'udp'));
            expect(exchange.response.rcode, what).to.equal(RCODE.NOERROR);
          } else {
            await waitFor(what, 30_000, async () => ((await tcpAccepts(ip, target)) ? true : undefined));
          }
        }
      }
    }

    // Downward API env reaches the echo server, which echoes its namespace and pod name.
    const infra = rename.get('gateway-conformance-infra') ?? '';
    const backend = pods.find((p) => p.metadata?.labels?.app === 'infra-backend-v1' && p.metadata.namespace === infra);
    const echo = await getJson(backend?.status?.podIP ?? '', 3000, '/base-manifests');
    expect(echo).to.include({ namespace: infra, pod: backend?.metadata?.name, path: '/base-manifests' });

    // Secret volumes with items (tls.crt → crt, tls.key → key): each TLS server presents its Secret's certificate.
    for (const pod of pods) {
      const container = pod.spec?.containers[0];
      const certEnv = container?.env?.find((e) => e.name === 'TLS_SERVER_CERT');
      if (!certEnv) continue;
      const secret = pod.spec?.volumes?.find((v) => v.secret)?.secret?.secretName ?? '';
      const pem = certificates.get(`${pod.metadata?.namespace}/${secret}`) ?? '';
      const served = await peerCertificate(pod.status?.podIP ?? '', 8443, 'abc.example.com');
      expect(served.equals(new X509Certificate(pem).raw), `certificate of ${pod.metadata?.namespace}/${pod.metadata?.name}`).to.equal(true);
    }
  });

  it('runs the coredns image as our stand-in: whoami for foo.bar.com over UDP and TCP, REFUSED for other names', async () => {
    const namespace = rename.get('gateway-conformance-infra') ?? '';
    const [pod] = (await core.listNamespacedPod({ namespace, labelSelector: 'app=udp' })).items;
    const ip = pod?.status?.podIP ?? '';
    expect(ip).to.match(/^198\.1[89]\./);
    for (const transport of ['udp', 'tcp'] as const) {
      const exchange = await queryDns(ip, 53, 'foo.bar.com', DNS_TYPE.A, transport);
      expect(exchange.response).to.deep.include({ rcode: RCODE.NOERROR, authoritative: true, answers: [] });
      const [address, srv] = exchange.response.additional;
      expect(address?.type).to.equal(DNS_TYPE.A);
      expect([...(address?.data ?? [])].join('.'), 'the client address the stand-in saw').to.equal(exchange.localAddress);
      expect(srv).to.deep.include({ name: `_${transport}.foo.bar.com.`, type: DNS_TYPE.SRV });
      expect(srv?.data.readUInt16BE(4), 'the client port the stand-in saw').to.equal(exchange.localPort);
      // The "." block forwards to 8.8.8.8 in coredns; the stand-in never sends that traffic: REFUSED.
      const refused = await queryDns(ip, 53, 'kubernetes.io', DNS_TYPE.A, transport);
      expect(refused.response.rcode).to.equal(RCODE.REFUSED);
    }
    const log = await core.readNamespacedPodLog({ name: pod?.metadata?.name ?? '', namespace, container: 'coredns' });
    expect(log).to.include('not coredns');
    expect(log).to.match(/serving foo\.bar\.com\.:53 — whoami/);
    expect(log).to.match(/REFUSING \.:53 — forward to 8\.8\.8\.8, 9\.9\.9\.9 would leave this machine/);
    expect(log).to.include('kubernetes.io. type 1 → REFUSED'); // the "." block has `log`
    // The kubelet says so in its own output too (logs/ beside the admin kubeconfig, as up.sh writes them).
    const kubeletLog = await readFile(path.join(path.dirname(process.env.KUBECONFIG ?? ''), 'logs/kubelet.log'), 'utf8');
    expect(kubeletLog).to.include(`pod ${namespace}/${pod?.metadata?.name} container coredns: image registry.k8s.io/coredns/coredns:v1.12.2 is a STAND-IN`);
  });
});
