/**
 * The Dockerfile builds what hack/image.sh builds: the same staging script, the same three layers
 * in the same order on an empty base, and the same Node release as hack/node24.sh. (The config
 * fields are compared with the config crane writes in test/e2e/image.test.ts.)
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseDockerfile, readDockerfile } from '../support/dockerfile.js';

const file = (path: string): string => fileURLToPath(new URL(`../../${path}`, import.meta.url));

describe('Dockerfile', () => {
  const docker = readDockerfile(file('Dockerfile'));
  const stage = (name: string) => {
    const found = docker.stages.find((s) => s.name === name);
    if (!found) throw new Error(`no stage ${name}`);
    return found;
  };

  it('builds on the Node release hack/node24.sh installs', () => {
    const pinned = /TUNA_NODE_VERSION="\$\{TUNA_NODE_VERSION:-([0-9.]+)\}"/.exec(readFileSync(file('hack/node24.sh'), 'utf8'))?.[1];
    expect(pinned).to.match(/^24\./);
    expect(docker.args.NODE_VERSION).to.equal(pinned);
    expect(stage('build').from).to.equal(`node:${pinned}-bookworm-slim`);
  });

  it('stages the root filesystem with hack/image-rootfs.sh, as hack/image.sh does', () => {
    expect(stage('build').runs.some((r) => r.startsWith('image-rootfs.sh /rootfs /usr/local/bin/node /app'))).to.equal(true);
    expect(readFileSync(file('hack/image.sh'), 'utf8')).to.include('hack/image-rootfs.sh" "$work/rootfs" "$node_bin" "$work/app"');
  });

  it('puts the base, node and app layers on an empty base, in that order', () => {
    const runtime = stage('runtime');
    expect(runtime.from).to.equal('scratch');
    expect(runtime.copies).to.deep.equal(['base', 'node', 'app'].map((part) => ({ from: 'build', src: `/rootfs/${part}/`, dest: '/' })));
  });

  it('has an operator and an edge target that differ only in command, title, description and port', () => {
    const { operator, edge } = { operator: stage('operator').config, edge: stage('edge').config };
    expect(operator.Cmd).to.deep.equal(['operator']);
    expect(edge.Cmd).to.deep.equal(['edge']);
    expect(operator.ExposedPorts).to.deep.equal(['8080/tcp']);
    for (const c of [operator, edge]) {
      expect(c.User).to.equal('65532:65532');
      expect(c.WorkingDir).to.equal('/app');
      expect(c.Entrypoint).to.deep.equal(['/usr/local/bin/node', '--max-semi-space-size=16', '/app/dist/cli/main.js']);
      expect(c.Env).to.deep.equal(['PATH=/usr/local/bin', 'NODE_ENV=production']);
    }
    expect(docker.stages.at(-1)?.name, 'the default target').to.equal('operator');
  });

  it('reads continuations, quoted labels and an ENTRYPOINT that resets the inherited CMD', () => {
    const parsed = parseDockerfile('ARG V=1\nFROM a:${V} AS one\nCMD ["x"]\nLABEL k=v \\\n  q="two words"\nFROM one AS two\nENTRYPOINT ["e"]\nEXPOSE 80 53/udp\n');
    expect(parsed.stages.map((s) => s.from)).to.deep.equal(['a:1', 'one']);
    expect(parsed.stages[1]?.config).to.deep.equal({ Env: [], ExposedPorts: ['80/tcp', '53/udp'], Labels: { k: 'v', q: 'two words' }, Entrypoint: ['e'] });
  });
});
