import { expect } from 'chai';
import { execFile, spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { packageRoot } from '../../src/cli/package-root.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);

// hack/bundle.js (npm run build, the images, the bench): the CLI as one file plus lazy chunks.
describe('the bundled CLI (hack/bundle.js)', function () {
  this.timeout(120_000);
  let dir = '';

  before(async () => {
    // a checkout's layout: package.json beside dist/, node_modules found from the repository
    dir = mkdtempSync(join(repoRoot, '.bundle-test-'));
    copyFileSync(join(repoRoot, 'package.json'), join(dir, 'package.json'));
    mkdirSync(join(dir, 'dist', 'cli'), { recursive: true });
    writeFileSync(join(dir, 'dist', 'cli', 'chunk-STALE0.js'), 'stale');
    await run(process.execPath, [join(repoRoot, 'hack', 'bundle.js'), join(dir, 'dist')], { cwd: repoRoot, timeout: 90_000 });
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('writes main.js and the chunks of the lazily loaded commands beside it, and drops an older bundle\'s chunks', () => {
    const files = readdirSync(join(dir, 'dist', 'cli'));
    expect(files).to.include('main.js');
    expect(files).not.to.include('chunk-STALE0.js');
    expect(files.filter((f) => /^chunk-[A-Z0-9]+\.js$/.test(f)).length).to.be.greaterThan(5);
    // the Kubernetes client and pg stay packages, loaded from node_modules when first used
    const all = files.map((f) => readFileSync(join(dir, 'dist', 'cli', f), 'utf8')).join('\n');
    expect(all).to.match(/from "@kubernetes\/client-node"|import\("@kubernetes\/client-node"\)/);
    expect(all).not.to.include('class KubeConfig');
  });

  it('keeps the names of the error classes (their name is new.target.name, which logs print)', () => {
    const all = readdirSync(join(dir, 'dist', 'cli')).map((f) => readFileSync(join(dir, 'dist', 'cli', f), 'utf8')).join('\n');
    // `class X` or `X = class` (a class expression takes its name from the binding)
    const bundled = new Set([...all.matchAll(/class ([A-Za-z0-9_$]+)|([A-Za-z0-9_$]+) = class\b/g)].map((m) => m[1] ?? m[2] ?? ""));
    const errorClasses = [...readdirSync(join(repoRoot, 'src'), { recursive: true, encoding: 'utf8' })]
      .filter((f) => f.endsWith('.ts'))
      .flatMap((f) => [...readFileSync(join(repoRoot, 'src', f), 'utf8').matchAll(/export class ([A-Za-z0-9_]+Error) extends/g)].map((m) => m[1]!));
    expect(errorClasses.length).to.be.greaterThan(10);
    // every error class the bundle holds (a few are for other commands' chunks only) under its own name
    expect(errorClasses.filter((name) => bundled.has(name)).length, 'error classes found in the bundle').to.be.greaterThan(30);
    const renamed = errorClasses.filter((name) => !bundled.has(name) && [...bundled].some((b) => b.replace(/^_|\d+$/g, '') === name));
    expect(renamed).to.deep.equal([]);
  });

  it("takes a lazily imported CommonJS package's default export, the only one its chunk has (no named exports destructured)", () => {
    const cli = join(dir, 'dist', 'cli');
    const chunks = readdirSync(cli).filter((f) => f.endsWith('.js'));
    // a chunk that only re-exports a CommonJS package: `export default require_x();`
    const commonJs = chunks.filter((f) => /^export default require_[A-Za-z0-9_$]+\(\);$/m.test(readFileSync(join(cli, f), 'utf8')));
    expect(commonJs.length, 'CommonJS packages imported lazily (yaml, prom-client)').to.be.greaterThan(1);
    const wrong: string[] = [];
    for (const f of chunks) {
      const text = readFileSync(join(cli, f), 'utf8');
      for (const c of commonJs) {
        const at = `import("./${c}")`;
        for (let i = text.indexOf(at); i >= 0; i = text.indexOf(at, i + 1)) {
          const around = text.slice(Math.max(0, i - 40), i + at.length + 30);
          const destructured = /\{ (?!default\b)[A-Za-z_$][^}]*\} = await $/.test(text.slice(Math.max(0, i - 40), i)) || /^\.then\(\(\{ (?!default\b)/.test(text.slice(i + at.length));
          if (destructured) wrong.push(`${f}: ${around}`);
        }
      }
    }
    expect(wrong).to.deep.equal([]);
  });

  it('serves a two-worker edge\'s /metrics from the bundle (the primary aggregates every worker through prom-client)', async () => {
    const config = join(dir, 'edge.yaml');
    writeFileSync(config, 'listen:\n  tunnel: {host: "127.0.0.1", port: 0}\n  http: {host: "127.0.0.1", port: 0}\nbindings: []\n');
    const edge = spawn(process.execPath, [join(dir, 'dist', 'cli', 'main.js'), 'edge', '--config', config, '--workers', '2'], { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      let out = '';
      const port = await new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no listener line: ${out}`)), 30_000);
        const onData = (b: Buffer): void => {
          out += b.toString();
          const m = /tunnel listener on port (\d+)/.exec(out);
          if (m) (clearTimeout(timer), resolve(Number(m[1])));
        };
        edge.stdout.on('data', onData);
        edge.stderr.on('data', onData);
        edge.once('exit', (code) => reject(new Error(`edge exited ${code}: ${out}`)));
      });
      const res = await fetch(`http://127.0.0.1:${port}/metrics`);
      const text = await res.text();
      expect(res.status, text.slice(0, 200)).to.equal(200);
      expect(text).to.match(/worker="1"/);
    } finally {
      edge.kill('SIGKILL');
    }
  });

  it('runs: --version reads the package.json above dist/, and a command loaded from a chunk answers --help', async () => {
    const main = join(dir, 'dist', 'cli', 'main.js');
    const version = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version;
    expect((await run(process.execPath, [main, '--version'], { timeout: 30_000 })).stdout.trim()).to.equal(`tuna ${version}`);
    expect((await run(process.execPath, [main, 'http', '--help'], { timeout: 30_000 })).stdout).to.match(/^Usage: tuna http/);
    expect((await run(process.execPath, [main, 'edge', '--help'], { timeout: 30_000 })).stdout).to.match(/^Usage: tuna edge/);
  });

  it('finds the package root from a module at any depth (src/cli/commands, dist/cli/commands, dist/cli)', () => {
    expect(packageRoot(pathToFileURL(join(dir, 'dist', 'cli', 'chunk-X.js')).href)).to.equal(dir);
    expect(packageRoot(pathToFileURL(join(dir, 'dist', 'cli', 'commands', 'demo.js')).href)).to.equal(dir);
    expect(packageRoot(pathToFileURL(join(repoRoot, 'src', 'cli', 'commands', 'demo.ts')).href)).to.equal(repoRoot.replace(/\/$/, ''));
  });
});
