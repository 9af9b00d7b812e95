import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);

/**
 * loadedAfterHttpImports runs a fresh Node (the sources through tsx) that imports what `tuna http`
 * imports before its first dial, optionally after keepUndiciLazy(), and reports whether it loaded
 * undici (Node's internal fetch, from `process.moduleLoadList`) and what node:http still offers.
 */
async function loadedAfterHttpImports(keepLazy: boolean): Promise<{ undici: boolean; namedWebSocket: boolean; globalWebSocket: string; request: string }> {
  const script = `
    ${keepLazy ? "(await import('./src/cli/startup.ts')).keepUndiciLazy();" : ''}
    await import('./src/cli/main.ts');
    await import('./src/cli/commands/http.ts');
    await import('./src/cli/container.ts');
    const http = await import('node:http');
    console.log(JSON.stringify({
      undici: process.moduleLoadList.some((m) => m.includes('undici')),
      namedWebSocket: 'WebSocket' in http,
      globalWebSocket: typeof globalThis.WebSocket,
      request: typeof http.request,
    }));`;
  const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: repoRoot, timeout: 60_000 });
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as { undici: boolean; namedWebSocket: boolean; globalWebSocket: string; request: string };
}

describe('tuna http: start-up (issue 13, first byte through a fresh tunnel)', function () {
  this.timeout(120_000);

  it('loads no undici for node:http once keepUndiciLazy ran, and still has http.request and the global WebSocket', async () => {
    const lazy = await loadedAfterHttpImports(true);
    expect(lazy).to.deep.equal({ undici: false, namedWebSocket: false, globalWebSocket: 'function', request: 'function' });
  });

  it('loads undici through the node:http namespace without it (what keepUndiciLazy avoids)', async () => {
    const eager = await loadedAfterHttpImports(false);
    expect(eager.undici).to.equal(true);
    expect(eager.namedWebSocket).to.equal(true);
  });
});
