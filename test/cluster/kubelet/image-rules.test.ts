// image-rules.test.ts — the test kubelet's pure rules for pulled images: which registries it pulls
// from, the image config, entrypoint and user rules, the `kubernetes` Service variables and the
// projected token's access. (Runs in the cluster tier, next to the kubelet's end-to-end tests.)
import { expect } from 'chai';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { parseServiceAddress } from '../../support/kubelet/apiserver-relay.js';
import { kubernetesServiceEnv } from '../../support/kubelet/container-env.js';
import { imageArgv, resolveRunAs } from '../../support/kubelet/container-rootfs.js';
import { isLoopbackRegistry, parseImageConfig, referenceAtDigest, registryHost, type PulledImage } from '../../support/kubelet/image-puller.js';
import { tokenFileAccess } from '../../support/kubelet/pod-volumes.js';

const DIGEST = `sha256:${'a'.repeat(64)}`;

function image(user: string, rootfs = '/nonexistent'): PulledImage {
  return { reference: '127.0.0.1:15000/app:1', digest: DIGEST, rootfs, config: { entrypoint: ['/bin/app'], cmd: ['serve'], env: [['PATH', '/bin']], user, workingDir: '/app' } };
}

function pod(spec: Partial<NonNullable<V1Pod['spec']>> = {}): V1Pod {
  return { metadata: { name: 'p', namespace: 'n' }, spec: { containers: [{ name: 'c' }], ...spec } };
}

describe('test kubelet: pulled images', () => {
  const registries: [string, string | undefined, boolean][] = [
    ['127.0.0.1:15000/tuna/operator:0.1.0', '127.0.0.1:15000', true],
    ['localhost:5000/app', 'localhost:5000', true],
    ['[::1]:5000/app:1', '[::1]:5000', true],
    ['127.0.0.2/app', '127.0.0.2', true],
    ['registry.k8s.io/coredns/coredns:v1.11', 'registry.k8s.io', false],
    ['tuna/operator:0.1.0', undefined, false],
    ['nginx', undefined, false],
    ['10.0.0.1:5000/app', '10.0.0.1:5000', false],
  ];
  for (const [ref, host, isLoopback] of registries) {
    it(`reads registry ${host ?? '(Docker Hub)'} from ${ref}, ${isLoopback ? '' : 'not '}a loopback one`, () => {
      expect(registryHost(ref)).to.equal(host);
      expect(isLoopbackRegistry(ref)).to.equal(isLoopback);
    });
  }

  it('pins a reference to its digest, dropping the tag but not the registry port', () => {
    expect(referenceAtDigest('127.0.0.1:15000/tuna/operator:0.1.0', DIGEST)).to.equal(`127.0.0.1:15000/tuna/operator@${DIGEST}`);
    expect(referenceAtDigest('127.0.0.1:15000/app', DIGEST)).to.equal(`127.0.0.1:15000/app@${DIGEST}`);
  });

  it('reads entrypoint, cmd, env (values may hold =), user and working dir from an image config', () => {
    const config = parseImageConfig(JSON.stringify({ config: { Entrypoint: ['/usr/local/bin/node', '/app/main.js'], Cmd: ['operator'], Env: ['PATH=/usr/local/bin', 'A=b=c'], User: '65532:65532', WorkingDir: '/app' } }));
    expect(config).to.deep.equal({ entrypoint: ['/usr/local/bin/node', '/app/main.js'], cmd: ['operator'], env: [['PATH', '/usr/local/bin'], ['A', 'b=c']], user: '65532:65532', workingDir: '/app' });
    expect(parseImageConfig('{"config":{"Cmd":null}}')).to.deep.equal({ entrypoint: [], cmd: [], env: [], user: '', workingDir: '' });
  });

  const argvCases: [string, Partial<V1Container>, string[]][] = [
    ['entrypoint and cmd', {}, ['/bin/app', 'serve']],
    ['entrypoint and args (args replace cmd)', { args: ['check'] }, ['/bin/app', 'check']],
    ['command alone (cmd dropped)', { command: ['/bin/other'] }, ['/bin/other']],
    ['command and args', { command: ['/bin/other'], args: ['x'] }, ['/bin/other', 'x']],
    ['empty args (cmd dropped)', { args: [] }, ['/bin/app']],
  ];
  for (const [what, container, argv] of argvCases) {
    it(`runs ${what}`, () => expect(imageArgv({ name: 'c', ...container }, image(''), (list) => list ?? [])).to.deep.equal(argv));
  }

  describe('the user a container runs as', () => {
    let rootfs: string;
    before(() => {
      rootfs = mkdtempSync(path.join(tmpdir(), 'tuna-kubelet-rootfs-'));
      mkdirSync(path.join(rootfs, 'etc'));
      writeFileSync(path.join(rootfs, 'etc/passwd'), 'root:x:0:0::/root:/sbin/nologin\nnonroot:x:65532:65533::/home:/sbin/nologin\n');
      writeFileSync(path.join(rootfs, 'etc/group'), 'root:x:0:\nstaff:x:50:\n');
    });
    after(() => rmSync(rootfs, { recursive: true, force: true }));

    const cases: [string, string, Partial<NonNullable<V1Pod['spec']>>, Partial<V1Container>, { uid: number; gid: number }][] = [
      ["the image's uid:gid", '65532:65532', {}, {}, { uid: 65532, gid: 65532 }],
      ["the image's user name and its primary group", 'nonroot', {}, {}, { uid: 65532, gid: 65533 }],
      ["the image's numeric user and its passwd group", '65532', {}, {}, { uid: 65532, gid: 65533 }],
      ['a group name of the image', '65532:staff', {}, {}, { uid: 65532, gid: 50 }],
      ['root for an image with no user', '', {}, {}, { uid: 0, gid: 0 }],
      ["the pod's runAsUser/runAsGroup over the image's", '65532:65532', { securityContext: { runAsUser: 1000, runAsGroup: 1001 } }, {}, { uid: 1000, gid: 1001 }],
      ["the container's over the pod's", '', { securityContext: { runAsUser: 1000 } }, { securityContext: { runAsUser: 2000, runAsGroup: 3 } }, { uid: 2000, gid: 3 }],
    ];
    for (const [what, user, spec, container, runAs] of cases) {
      it(`runs as ${what}`, () => expect(resolveRunAs(pod(spec), { name: 'c', ...container }, image(user, rootfs))).to.deep.equal(runAs));
    }

    it('refuses root under runAsNonRoot, and a user name it cannot verify, as the kubelet does', () => {
      expect(() => resolveRunAs(pod({ securityContext: { runAsNonRoot: true } }), { name: 'c' }, image('', rootfs))).to.throw('runAsNonRoot and image will run as root');
      expect(() => resolveRunAs(pod(), { name: 'c', securityContext: { runAsNonRoot: true } }, image('nonroot', rootfs))).to.throw('non-numeric user (nonroot)');
      expect(resolveRunAs(pod({ securityContext: { runAsNonRoot: true } }), { name: 'c' }, image('65532:65532', rootfs))).to.deep.equal({ uid: 65532, gid: 65532 });
    });

    it('names a user the image does not have', () => {
      expect(() => resolveRunAs(pod(), { name: 'c' }, image('ghost', rootfs))).to.throw('unable to find user ghost');
    });
  });

  it('tells every container of the kubernetes Service, as the kubelet does', () => {
    expect(Object.fromEntries(kubernetesServiceEnv({ host: '198.19.0.1', port: 443 }))).to.deep.equal({
      KUBERNETES_SERVICE_HOST: '198.19.0.1',
      KUBERNETES_SERVICE_PORT: '443',
      KUBERNETES_SERVICE_PORT_HTTPS: '443',
      KUBERNETES_PORT: 'tcp://198.19.0.1:443',
      KUBERNETES_PORT_443_TCP: 'tcp://198.19.0.1:443',
      KUBERNETES_PORT_443_TCP_PROTO: 'tcp',
      KUBERNETES_PORT_443_TCP_PORT: '443',
      KUBERNETES_PORT_443_TCP_ADDR: '198.19.0.1',
    });
  });

  it('gives the projected token to the one runAsUser, to fsGroup, or else the volume mode', () => {
    expect(tokenFileAccess(pod({ securityContext: { runAsUser: 65532, runAsGroup: 65532 } }), 0o644)).to.deep.equal({ mode: 0o600, owner: { uid: 65532, gid: 65532 } });
    expect(tokenFileAccess(pod({ securityContext: { fsGroup: 2000, runAsUser: 1 } }), 0o644)).to.deep.equal({ mode: 0o640, owner: { uid: 0, gid: 2000 } });
    const twoUsers = pod({ containers: [{ name: 'a', securityContext: { runAsUser: 1 } }, { name: 'b', securityContext: { runAsUser: 2 } }] });
    expect(tokenFileAccess(twoUsers, 0o644)).to.deep.equal({ mode: 0o644 });
    expect(tokenFileAccess(pod(), undefined)).to.deep.equal({ mode: 0o644 });
  });

  it('reads HOST:PORT for the relay and names the variable when it is wrong', () => {
    expect(parseServiceAddress('198.19.0.1:443', 'X')).to.deep.equal({ host: '198.19.0.1', port: 443 });
    expect(() => parseServiceAddress('198.19.0.1', 'TUNA_APISERVER')).to.throw('TUNA_APISERVER must be HOST:PORT');
    expect(() => parseServiceAddress('h:70000', 'TUNA_APISERVER')).to.throw('TUNA_APISERVER');
  });
});
