// image-run.test.ts — the test kubelet runs a real image: it pulls the tuna image from the
// cluster's loopback registry, runs a program in the image's own root filesystem as the image's
// user with its env and working dir, the pod's ConfigMap, Secret and service-account token mounted,
// and the pod reaches the apiserver through the in-cluster config (KUBERNETES_SERVICE_HOST/PORT).
import { expect } from 'chai';
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { clusterConfig, waitFor } from '../cluster-env.js';
import { pushTunaImage, type PushedImage } from '../tuna-image.js';

// Runs in the image's node; prints one JSON line of what the container sees.
const PROBE = `
const fs = require('fs'), https = require('https');
const sa = '/var/run/secrets/kubernetes.io/serviceaccount';
const out = { uid: process.getuid(), gid: process.getgid(), groups: process.getgroups(), cwd: process.cwd(),
  path: process.env.PATH, nodeEnv: process.env.NODE_ENV, own: process.env.OWN, host: process.env.KUBERNETES_SERVICE_HOST,
  port: process.env.KUBERNETES_SERVICE_PORT, config: fs.readFileSync('/etc/probe/config/greeting', 'utf8'),
  secret: fs.readFileSync('/etc/probe/secret/password', 'utf8'), hasShell: fs.existsSync('/bin/sh'),
  hostsHasPod: fs.readFileSync('/etc/hosts', 'utf8').includes(process.env.HOSTNAME), hostname: require('os').hostname() };
try { fs.writeFileSync('/app/written', 'x'); out.rootWrite = 'ok'; } catch (e) { out.rootWrite = e.code; }
try { fs.writeFileSync('/tmp/written', 'x'); out.tmpWrite = 'ok'; } catch (e) { out.tmpWrite = e.code; }
const body = JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' });
const req = https.request({ host: out.host, port: out.port, method: 'POST', path: '/apis/authentication.k8s.io/v1/selfsubjectreviews',
  ca: fs.readFileSync(sa + '/ca.crt'), headers: { authorization: 'Bearer ' + fs.readFileSync(sa + '/token', 'utf8'), 'content-type': 'application/json' } },
  (res) => { let t = ''; res.on('data', (c) => (t += c)); res.on('end', () => { out.status = res.statusCode;
    try { out.user = JSON.parse(t).status.userInfo.username; } catch { out.user = t; } console.log(JSON.stringify(out)); }); });
req.on('error', (e) => { out.error = e.message; console.log(JSON.stringify(out)); });
req.end(body);
`;

describe('test kubelet: a pulled image', function () {
  this.timeout(900_000);
  const namespace = `kubelet-image-${process.pid}`;
  let core: CoreV1Api;
  let image: PushedImage;

  before(async () => {
    core = clusterConfig().makeApiClient(CoreV1Api);
    image = await pushTunaImage('kubelet-test');
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    await waitFor('default ServiceAccount', 30_000, () => core.readNamespacedServiceAccount({ name: 'default', namespace }));
    await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'probe' }, data: { greeting: 'hello' } } });
    await core.createNamespacedSecret({ namespace, body: { metadata: { name: 'probe' }, stringData: { password: 's3cret' } } });
  });

  after(async () => {
    await core?.deleteNamespace({ name: namespace }).catch(() => undefined);
  });

  async function runToCompletion(pod: V1Pod): Promise<{ phase: string; log: string; pod: V1Pod }> {
    const name = pod.metadata?.name ?? '';
    await core.createNamespacedPod({ namespace, body: pod });
    const done = await waitFor(`pod ${name} to finish`, 180_000, async () => {
      const p = await core.readNamespacedPod({ name, namespace });
      return p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed' ? p : undefined;
    });
    const log = await core.readNamespacedPodLog({ name, namespace, container: 'probe' });
    return { phase: done.status?.phase ?? '', log, pod: done };
  }

  it('runs as the image user in its root, with its env, the pod volumes, and reaches the apiserver in-cluster', async () => {
    const { phase, log, pod } = await runToCompletion({
      metadata: { name: 'probe' },
      spec: {
        restartPolicy: 'Never',
        containers: [
          {
            name: 'probe',
            image: image.reference,
            command: ['node', '-e', PROBE],
            env: [{ name: 'OWN', value: 'mine' }],
            securityContext: { readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
            volumeMounts: [
              { name: 'config', mountPath: '/etc/probe/config', readOnly: true },
              { name: 'secret', mountPath: '/etc/probe/secret', readOnly: true },
              { name: 'tmp', mountPath: '/tmp' },
            ],
          },
        ],
        volumes: [
          { name: 'config', configMap: { name: 'probe' } },
          { name: 'secret', secret: { secretName: 'probe' } },
          { name: 'tmp', emptyDir: {} },
        ],
      },
    });
    expect(phase, log).to.equal('Succeeded');
    const seen = JSON.parse(log.trim().split('\n').pop() ?? '{}') as Record<string, unknown>;
    expect(seen).to.deep.include({
      uid: 65532,
      gid: 65532,
      groups: [65532],
      cwd: '/app',
      path: '/usr/local/bin',
      nodeEnv: 'production',
      own: 'mine',
      host: '198.19.0.1',
      port: '443',
      config: 'hello',
      secret: 's3cret',
      hasShell: false,
      hostsHasPod: true,
      hostname: 'probe',
      rootWrite: 'EROFS',
      tmpWrite: 'ok',
      status: 201,
      user: `system:serviceaccount:${namespace}:default`,
    });
    expect(pod.status?.containerStatuses?.[0]?.imageID).to.match(/^127\.0\.0\.1:\d+\/tuna\/operator@sha256:[0-9a-f]{64}$/);
  });

  it('refuses to run the image as root under runAsNonRoot with runAsUser 0 (CreateContainerConfigError)', async () => {
    const name = 'as-root';
    await core.createNamespacedPod({
      namespace,
      body: { metadata: { name }, spec: { restartPolicy: 'Never', securityContext: { runAsNonRoot: true, runAsUser: 0 }, containers: [{ name: 'probe', image: image.reference }] } },
    });
    const waiting = await waitFor('the container to wait with a reason', 120_000, async () => {
      const p = await core.readNamespacedPod({ name, namespace });
      const reason = p.status?.containerStatuses?.[0]?.state?.waiting;
      return reason?.reason === 'CreateContainerConfigError' ? reason : undefined;
    });
    expect(waiting.message).to.include('runAsNonRoot and image will run as root');
  });

  it('reports ErrImagePull for an image on a loopback registry that does not have it', async () => {
    const name = 'missing';
    const registry = image.repository.split('/')[0];
    await core.createNamespacedPod({ namespace, body: { metadata: { name }, spec: { restartPolicy: 'Never', containers: [{ name: 'probe', image: `${registry}/tuna/nothing:1` }] } } });
    const waiting = await waitFor('ErrImagePull', 120_000, async () => {
      const p = await core.readNamespacedPod({ name, namespace });
      const state = p.status?.containerStatuses?.[0]?.state?.waiting;
      return state?.reason === 'ErrImagePull' ? state : undefined;
    });
    expect(waiting.message).to.include(`${registry}/tuna/nothing:1`);
  });
});
