import { expect } from 'chai';
import { spawn } from 'node:child_process';
import http from 'node:http';
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

/** waitForLine resolves with the first stdout match of `pattern`, or rejects when the process exits. */
function waitForLine(child: ChildProcess, pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`no line matching ${pattern} within ${timeoutMs} ms; output:\n${seen}`)), timeoutMs);
    child.stdout!.on('data', (c: Buffer) => {
      seen += c.toString();
      const m = pattern.exec(seen);
      if (m) {
        clearTimeout(timer);
        resolve(m);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`demo exited early with ${String(code)}; output:\n${seen}`));
    });
  });
}

describe('npm run demo', function () {
  this.timeout(60_000);
  let child: ChildProcess | undefined;

  afterEach(() => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    child = undefined;
  });

  it('prints a curl line that works, serves /api and / from different backends, and exits cleanly on SIGTERM', async () => {
    child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'demo'], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    const m = await waitForLine(child, /curl -H 'Host: ([a-z.]+)' (http:\/\/127\.0\.0\.1:\d+)\/api\/hello/, 45_000);
    const [, host, base] = m;
    // As the printed curl line does: the edge's address, the demo host in the Host header (fetch
    // may not set Host, so node:http plays curl here).
    const get = (path: string) =>
      new Promise<{ status: number; type: string; body: string }>((resolve, reject) => {
        const req = http.get(`${base!}${path}`, { headers: { host: host! } }, (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'] ?? '', body }));
        });
        req.once('error', reject);
      });
    const api = await get('/api/hello');
    const web = await get('/');
    expect(api.status).to.equal(200);
    expect(web.status).to.equal(200);
    expect((JSON.parse(api.body) as { service: string }).service).to.equal('api');
    expect(web.type).to.contain('text/html');
    expect(web.body).to.contain('the web Service');
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => child!.once('exit', (code, signal) => resolve({ code, signal })));
    child.kill('SIGTERM');
    const { code, signal } = await exited;
    expect({ code, signal }, stderr).to.deep.equal({ code: 0, signal: null });
    expect(stderr).to.contain('SIGTERM: stopping the demo');
  });
});
