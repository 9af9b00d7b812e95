// pure-functions.test.ts — the test kubelet's pure rules: images, $(VAR) expansion, downward API,
// argv, pod phase, log tails. (Runs in the cluster tier, next to the kubelet's end-to-end tests.)
import { expect } from 'chai';
import type { V1ContainerState, V1Pod } from '@kubernetes/client-node';
import { expandVariables, resolveFieldRef } from '../../support/kubelet/container-env.js';
import { resolveArgv } from '../../support/kubelet/container-process.js';
import { imageRepository, resolveImage } from '../../support/kubelet/image-table.js';
import { tailLines } from '../../support/kubelet/log-server.js';
import { computePhase } from '../../support/kubelet/pod-runner.js';
import { IpAllocator, podNetworkNames } from '../../support/kubelet/pod-network.js';

const images = { echoBin: 'bin' };

describe('test kubelet: image table', () => {
  const cases: [string, string][] = [
    ['gcr.io/k8s-staging-gateway-api/echo-basic:v20240412', 'gcr.io/k8s-staging-gateway-api/echo-basic'],
    ['localhost:5000/app@sha256:abc', 'localhost:5000/app'],
    ['localhost:5000/app:1.0', 'localhost:5000/app'],
    ['nginx', 'nginx'],
  ];
  for (const [image, repository] of cases) {
    it(`strips tag and digest from ${image}`, () => expect(imageRepository(image)).to.equal(repository));
  }

  it('maps the echo-basic image of any tag to the built echo-basic', () => {
    expect(resolveImage('gcr.io/k8s-staging-gateway-api/echo-basic:any', images)).to.deep.equal({
      kind: 'binary',
      path: 'bin/echo-basic',
      name: 'echo-basic',
    });
  });

  it('maps the image the conformance suite uses (registry.k8s.io) to the built echo-basic', () => {
    expect(resolveImage('registry.k8s.io/gateway-api/echo-basic:v1.5.1', images)).to.include({ kind: 'binary', name: 'echo-basic' });
  });

  it('maps no program to an image it does not know, so the pod reports ErrImagePull', () => {
    expect(resolveImage('docker.io/library/nginx:1.27', images)).to.equal(undefined);
  });
});

describe('test kubelet: container environment', () => {
  const env = new Map([
    ['A', 'x'],
    ['B', 'y'],
  ]);
  const cases: [string, string][] = [
    ['$(A)-$(B)', 'x-y'],
    ['$$(A)', '$(A)'],
    ['$(MISSING)', '$(MISSING)'],
    ['plain', 'plain'],
  ];
  for (const [input, output] of cases) {
    it(`expands ${input} to ${output}`, () => expect(expandVariables(input, env)).to.equal(output));
  }

  const pod: V1Pod = {
    metadata: { name: 'p', namespace: 'ns', uid: 'u1', labels: { app: 'web' }, annotations: { note: 'hi' } },
    spec: { nodeName: 'n1', serviceAccountName: 'sa', containers: [] },
  };
  const fields: [string, string][] = [
    ['metadata.name', 'p'],
    ['metadata.namespace', 'ns'],
    ['metadata.uid', 'u1'],
    ["metadata.labels['app']", 'web'],
    ["metadata.annotations['note']", 'hi'],
    ['spec.nodeName', 'n1'],
    ['spec.serviceAccountName', 'sa'],
    ['status.podIP', '198.18.0.7'],
    ['status.hostIP', '127.0.0.1'],
  ];
  for (const [fieldPath, value] of fields) {
    it(`answers the downward API field ${fieldPath}`, () => expect(resolveFieldRef(pod, '198.18.0.7', { fieldPath })).to.equal(value));
  }
});

describe('test kubelet: argv', () => {
  const echo = { kind: 'binary', path: '/cache/echo-basic', name: 'echo-basic' } as const;
  it('runs the image entrypoint with args when the container has no command', () => {
    expect(resolveArgv({ name: 'c', args: ['--x=$(A)'] }, echo, new Map([['A', '1']]))).to.deep.equal(['/cache/echo-basic', '--x=1']);
  });

  it('rejects a command the image does not contain with RunContainerError', () => {
    expect(() => resolveArgv({ name: 'c', command: ['/bin/nginx'] }, echo, new Map())).to.throw(/not found in image/);
  });

  it('runs the container command of a tuna.test/host image', () => {
    expect(resolveArgv({ name: 'c', command: ['sh', '-c'], args: ['echo hi'] }, { kind: 'host-command' }, new Map())).to.deep.equal([
      'sh',
      '-c',
      'echo hi',
    ]);
  });
});

describe('test kubelet: pod phase', () => {
  const running: V1ContainerState = { running: {} };
  const ok: V1ContainerState = { terminated: { exitCode: 0 } };
  const failed: V1ContainerState = { terminated: { exitCode: 2 } };
  const waiting: V1ContainerState = { waiting: { reason: 'ErrImagePull' } };
  const cases: [string, V1ContainerState[], string, string][] = [
    ['waiting containers', [waiting], 'Always', 'Pending'],
    ['a running container', [running, waiting], 'Always', 'Running'],
    ['all succeeded under Never', [ok, ok], 'Never', 'Succeeded'],
    ['one failed under OnFailure', [ok, failed], 'OnFailure', 'Failed'],
    ['exited under Always (it restarts)', [ok], 'Always', 'Running'],
  ];
  for (const [what, states, policy, phase] of cases) {
    it(`is ${phase} for ${what}`, () => expect(computePhase(states, policy)).to.equal(phase));
  }
});

describe('test kubelet: helpers', () => {
  it('keeps the last n lines of a log', () => {
    expect(tailLines('a\nb\nc\n', 2)).to.equal('b\nc\n');
    expect(tailLines('a\nb', 1)).to.equal('b');
    expect(tailLines('a\nb\n', undefined)).to.equal('a\nb\n');
  });

  it('hands out distinct pod addresses in 198.18.0.0/16, a released one only after the rest of the range', () => {
    const ips = new IpAllocator();
    const a = ips.allocate();
    const b = ips.allocate();
    expect([a, b]).to.deep.equal(['198.18.0.2', '198.18.0.3']);
    ips.release(a);
    // not a again at once: the host may still hold a neighbour entry for it naming the old pod
    expect(ips.allocate()).to.equal('198.18.0.4');
    for (let i = 0; i < 65_530; i++) ips.allocate();
    expect(ips.allocate(), 'the range wrapped to the released address').to.equal(a);
    expect(() => ips.allocate()).to.throw('pod address range exhausted');
  });

  it('names a pod namespace and veth within the 15-byte interface name limit', () => {
    const names = podNetworkNames('0123abcd-4567-89ef-0000-111122223333');
    expect(names).to.deep.equal({ netns: 'tuna-kubelet-0123abcd45', hostVeth: 'tk-0123abcd45' });
    expect(names.hostVeth.length).to.be.at.most(15);
  });
});
