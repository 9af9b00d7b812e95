import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { selfSignedCertificate } from '../support/tunnel-certs.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

/** Ran is one finished command. */
interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** npmRunTuna is `npm run tuna -- <args>` typed in `cwd` (npm finds the package with --prefix; scripts start in its root). */
function npmRunTuna(args: string[], cwd: string): Promise<Ran> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TUNA_') && !k.startsWith('npm_') && k !== 'INIT_CWD'));
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['--prefix', repoRoot, '--silent', 'run', 'tuna', '--', ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
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

/** Relative paths given to `npm run tuna` are the user's: npm starts the script in the package root. */
describe('npm run tuna resolves relative paths against the directory it was typed in', function () {
  this.timeout(120_000);
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tuna-npm-run-'));
  });

  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('creates the store of tuna edge init --store rel.db there, not in the package', async () => {
    const name = `rel-${process.pid}-${Date.now()}.db`;
    const ran = await npmRunTuna(['edge', 'init', '--store', name, '--json'], dir);
    expect(ran.code, ran.stderr).to.equal(0);
    expect(existsSync(join(dir, name))).to.equal(true);
    expect(existsSync(join(repoRoot, name))).to.equal(false);
  });

  it('reads tuna run --manifests DIR from there', async () => {
    mkdirSync(join(dir, 'manifests'));
    writeFileSync(
      join(dir, 'manifests', 'site.yaml'),
      `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: site, namespace: default}
spec:
  ingressClassName: tuna
  rules: [{host: mine.test, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec: {ports: [{port: 80}]}
`,
    );
    const ran = await npmRunTuna(['run', '--manifests', 'manifests', '--once'], dir);
    expect(ran.code, ran.stderr).to.equal(0);
    expect(ran.stdout).to.contain('binding/host/mine.test: mine.test (1 route)');
  });

  it('reads --ca tunnel.crt from there: the command gets as far as dialing the edge', async () => {
    writeFileSync(join(dir, 'tunnel.crt'), selfSignedCertificate(['localhost']).cert);
    const ran = await npmRunTuna(['http', '3000', '--no-check', '--inspect=false', '--edge', 'tls://127.0.0.1:1', '--ca', 'tunnel.crt', '--key', 'tuna_test_key'], dir);
    expect(ran.stderr).not.to.contain('--ca tunnel.crt: ENOENT');
    expect(ran.stderr).to.match(/^tuna http: cannot reach edge/m);
    expect(ran.code).to.equal(69);
  });
});
