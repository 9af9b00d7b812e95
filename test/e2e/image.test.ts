/**
 * hack/image.sh builds the operator and edge images without a Docker engine: one build writes
 * the OCI tarball and pushes to a registry on loopback; the tarball is pushed again, and its
 * config and layers are pulled back from the registry, compared with the Dockerfile, unpacked into
 * a root filesystem and run with chroot as the image's user (the machine runs as root).
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { readDockerfile } from '../support/dockerfile.js';
import type { ImageConfigFields } from '../support/dockerfile.js';
import { childEnv, craneConfig, craneExport, craneManifest, craneRun, ensureCrane, repoPath, startRegistry } from '../support/crane.js';
import type { LoopbackRegistry, OciConfig } from '../support/crane.js';

const run = promisify(execFile);
const version = (JSON.parse(readFileSync(repoPath('package.json'), 'utf8')) as { version: string }).version;
const COMPONENTS = ['operator', 'edge'] as const;

/** asDockerfileFields puts a crane-written config in the shape the Dockerfile reader gives. */
function asDockerfileFields(config: OciConfig['config']): ImageConfigFields {
  const labels = { ...config.Labels };
  // set by hack/image.sh from package.json and git; the Dockerfile cannot know them statically
  delete labels['org.opencontainers.image.version'];
  delete labels['org.opencontainers.image.revision'];
  return {
    Env: config.Env ?? [],
    ...(config.User !== undefined ? { User: config.User } : {}),
    ...(config.WorkingDir !== undefined ? { WorkingDir: config.WorkingDir } : {}),
    ...(config.Entrypoint !== undefined ? { Entrypoint: config.Entrypoint } : {}),
    ...(config.Cmd !== undefined ? { Cmd: config.Cmd } : {}),
    ExposedPorts: Object.keys(config.ExposedPorts ?? {}),
    Labels: labels,
  };
}

/** filesUnder lists every file and symlink under `dir`, relative to it, sorted. */
function filesUnder(dir: string, base = dir): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? filesUnder(join(dir, e.name), base) : [`/${relative(base, join(dir, e.name))}`]))
    .sort();
}

describe('hack/image.sh: images without a Docker engine', function () {
  this.timeout(600_000);
  let crane: string;
  let registry: LoopbackRegistry | undefined;
  let work: string;
  let rootfs: string;
  let chrootBin: string;
  let envBin: string;
  /** what the registry serves: the images image.sh pushed, and those of its pushed tarball */
  const pushed: Record<string, string> = {};
  const fromTar: Record<string, string> = {};
  let layoutIndex: { manifests: { digest: string; annotations?: Record<string, string> }[] };

  before(async function () {
    if (process.getuid?.() !== 0) throw new Error('the image test unpacks and runs the image with chroot, which needs root');
    crane = await ensureCrane();
    registry = await startRegistry(crane);
    work = mkdtempSync(join(tmpdir(), 'tuna-image-'));
    const tar = join(work, 'tuna.oci.tar');
    await run(repoPath('hack/image.sh'), ['all', '--tar', tar, '--push', `${registry.host}/tuna:test`], { timeout: 590_000, env: childEnv(), maxBuffer: 16 * 1024 * 1024 });
    const layout = join(work, 'layout');
    mkdirSync(layout);
    await run('tar', ['-x', '-C', layout, '-f', tar]);
    layoutIndex = JSON.parse(readFileSync(join(layout, 'index.json'), 'utf8')) as typeof layoutIndex;
    await craneRun(crane, ['push', '--index', layout, `${registry.host}/from-tar:test`]);
    for (const c of COMPONENTS) {
      pushed[c] = `${registry.host}/tuna/${c}:test`;
      const entry = layoutIndex.manifests.find((m) => m.annotations?.['org.opencontainers.image.ref.name'] === `tuna/${c}:${version}`);
      if (entry) fromTar[c] = `${registry.host}/from-tar@${entry.digest}`;
    }
    // the operator's root filesystem, pulled back layer by layer from the registry
    rootfs = join(work, 'rootfs');
    mkdirSync(rootfs);
    await craneExport(crane, fromTar.operator!, rootfs);
    [chrootBin, envBin] = (await run('bash', ['-c', 'command -v chroot env'])).stdout.trim().split('\n') as [string, string];
  });

  after(async () => {
    await registry?.stop();
    if (work !== undefined) rmSync(work, { recursive: true, force: true });
  });

  it('writes an OCI layout naming tuna/operator and tuna/edge, the very images it pushed', async () => {
    expect(layoutIndex.manifests.map((m) => m.annotations?.['org.opencontainers.image.ref.name'])).to.have.members([`tuna/operator:${version}`, `tuna/edge:${version}`]);
    for (const c of COMPONENTS) {
      expect(fromTar[c], `tuna/${c} in the tarball`).to.be.a('string');
      expect(fromTar[c]!.split('@')[1]).to.equal((await craneRun(crane, ['digest', pushed[c]!])).trim());
    }
  });

  it('sets the platform linux/amd64 and OCI media types', async () => {
    for (const c of COMPONENTS) {
      const config = await craneConfig(crane, fromTar[c]!);
      expect([config.os, config.architecture]).to.deep.equal(['linux', 'amd64']);
      expect((await craneManifest(crane, fromTar[c]!)).mediaType).to.equal('application/vnd.oci.image.manifest.v1+json');
    }
  });

  for (const c of COMPONENTS) {
    it(`writes the ${c} image's user, working dir, entrypoint, command, env, ports and labels as the Dockerfile's ${c} target has them`, async () => {
      const target = readDockerfile(repoPath('Dockerfile')).stages.find((s) => s.name === c);
      expect(target, `Dockerfile target ${c}`).to.not.equal(undefined);
      const config = (await craneConfig(crane, fromTar[c]!)).config;
      expect(asDockerfileFields(config)).to.deep.equal(target!.config);
      expect(config.User).to.equal('65532:65532');
      expect(config.Labels?.['org.opencontainers.image.version']).to.equal(version);
    });
  }

  it('gives both images the same three layers: only their configs differ', async () => {
    const [operator, edge] = await Promise.all(COMPONENTS.map((c) => craneManifest(crane, fromTar[c]!)));
    expect(operator!.layers).to.have.length(3);
    expect(edge!.layers).to.deep.equal(operator!.layers);
    expect(edge!.config?.digest).to.not.equal(operator!.config?.digest);
  });

  it('runs tuna --version and tuna operator --help from the unpacked operator image with chroot, as 65532, with only the image env', async () => {
    const config = (await craneConfig(crane, fromTar.operator!)).config;
    // env -i: only the image's environment. (Node passes NODE_V8_COVERAGE on to children even
    // with an env of their own; under c8 the image's node would try to write coverage.)
    const chroot = (args: string[]) => run(envBin, ['-i', ...(config.Env ?? []), chrootBin, '--userspec=65532:65532', rootfs, ...config.Entrypoint!, ...args], { timeout: 60_000 });
    const versionRun = await chroot(['--version']);
    expect(versionRun.stdout.trim()).to.equal(`tuna ${version}`);
    expect(versionRun.stderr).to.equal('');
    const help = await chroot(config.Cmd!.concat('--help'));
    expect(help.stdout).to.match(/^Usage: tuna operator --edge ADDR --key API_KEY/);
  });

  it('holds no shell, only the libraries the node binary links, and files its user cannot change', async () => {
    const files = filesUnder(rootfs).filter((f) => !f.startsWith('/app/'));
    const libs = files.filter((f) => f.startsWith('/lib'));
    expect(files.filter((f) => !f.startsWith('/lib'))).to.deep.equal(['/etc/group', '/etc/nsswitch.conf', '/etc/passwd', '/usr/local/bin/node']);
    const { stdout } = await run('ldd', [join(rootfs, 'usr/local/bin/node')]);
    const linked = [...stdout.matchAll(/(\/\S+) \(0x/g)].map((m) => m[1]!).sort();
    expect(libs).to.deep.equal(linked);
    expect(readFileSync(join(rootfs, 'etc/passwd'), 'utf8')).to.include('nonroot:x:65532:65532:');
    expect(statSync(join(rootfs, 'tmp')).mode & 0o7777).to.equal(0o1777);
    for (const f of ['/usr/local/bin/node', '/app/dist/cli/main.js', '/app/package.json']) {
      const st = statSync(join(rootfs, f));
      expect([st.uid, st.mode & 0o022], f).to.deep.equal([0, 0]);
    }
    expect(readdirSync(join(rootfs, 'app/node_modules'))).to.include('@kubernetes').and.not.include('mocha');
  });
});
