// pod-features.test.ts — what a pod gets from our kubelet: downward API env, Secret and ConfigMap
// volumes as files, command/args with $(VAR) expansion, and ErrImagePull for unknown images.
import { expect } from 'chai';
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { clusterConfig, waitFor } from './cluster-env.js';

describe('test cluster: pod features', function () {
  this.timeout(120_000);
  const namespace = `features-${process.pid}`;
  // The client is made in before(): KUBECONFIG comes from the root hook, which runs after loading.
  let core: CoreV1Api;

  before(async () => {
    core = clusterConfig().makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    await waitFor('default ServiceAccount', 30_000, () => core.readNamespacedServiceAccount({ name: 'default', namespace }));
  });

  after(async () => {
    await core.deleteNamespace({ name: namespace }).catch(() => undefined);
  });

  it('gives a container downward API env, Secret and ConfigMap files and its expanded args', async () => {
    await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'settings' }, data: { greeting: 'hello from a configmap' } } });
    await core.createNamespacedSecret({ namespace, body: { metadata: { name: 'creds' }, stringData: { password: 'not-a-real-secret' } } });
    const script = [
      'echo "pod=$POD_NAME ns=$POD_NAMESPACE ip=$POD_IP"',
      'echo "arg=$1"',
      'echo "config=$(cat /etc/tuna-test/config/greeting)"',
      'echo "secret=$(cat /etc/tuna-test/secret/password)"',
      'echo "token-bytes=$(wc -c < /var/run/secrets/kubernetes.io/serviceaccount/token)"',
      'exec sleep 300',
    ].join('\n');
    const pod: V1Pod = {
      metadata: { name: 'shell' },
      spec: {
        containers: [
          {
            name: 'main',
            image: 'tuna.test/host:latest',
            command: ['sh', '-c', script, 'sh'],
            args: ['$(POD_NAME)-suffix'],
            env: [
              { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
              { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
              { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
            ],
            volumeMounts: [
              { name: 'config', mountPath: '/etc/tuna-test/config', readOnly: true },
              { name: 'secret', mountPath: '/etc/tuna-test/secret', readOnly: true },
            ],
          },
        ],
        volumes: [
          { name: 'config', configMap: { name: 'settings' } },
          { name: 'secret', secret: { secretName: 'creds' } },
        ],
      },
    };
    await core.createNamespacedPod({ namespace, body: pod });
    const running = await waitFor('the pod to run', 60_000, async () => {
      const current = await core.readNamespacedPod({ name: 'shell', namespace });
      return current.status?.containerStatuses?.[0]?.ready ? current : undefined;
    });
    const ip = running.status?.podIP ?? '';
    expect(ip).to.match(/^198\.18\./);
    const log = await waitFor('the log lines', 30_000, async () => {
      const text = await core.readNamespacedPodLog({ name: 'shell', namespace });
      return text.includes('token-bytes=') ? text : undefined;
    });
    expect(log).to.include(`pod=shell ns=${namespace} ip=${ip}`);
    expect(log).to.include('arg=shell-suffix');
    expect(log).to.include('config=hello from a configmap');
    expect(log).to.include('secret=not-a-real-secret');
    expect(log).to.not.include('token-bytes=0');
  });

  it('reports ErrImagePull for an image the kubelet cannot map to a program', async () => {
    await core.createNamespacedPod({
      namespace,
      body: { metadata: { name: 'unknown-image' }, spec: { containers: [{ name: 'main', image: 'docker.io/library/nginx:1.27' }] } },
    });
    // ContainerCreating comes first (the pod's network is being made); then the image verdict.
    const waiting = await waitFor('a waiting reason past ContainerCreating', 60_000, async () => {
      const current = await core.readNamespacedPod({ name: 'unknown-image', namespace });
      const state = current.status?.containerStatuses?.[0]?.state?.waiting;
      return state && state.reason !== 'ContainerCreating' ? state : undefined;
    });
    expect(waiting.reason).to.equal('ErrImagePull');
    const pod = await core.readNamespacedPod({ name: 'unknown-image', namespace });
    expect(pod.status?.phase).to.equal('Pending');
  });
});
