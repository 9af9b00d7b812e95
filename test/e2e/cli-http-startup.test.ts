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

/**
 * roomsLoadedByHttpImports runs a fresh Node that imports what `tuna http` imports before its first
 * dial and counts the modules of each room of src/ it loaded (a load hook sees every module).
 */
async function roomsLoadedByHttpImports(): Promise<Record<string, number>> {
  const script = `
    const { registerHooks } = await import('node:module');
    const seen = new Set();
    registerHooks({ load: (url, context, next) => (seen.add(url), next(url, context)) });
    await import('./src/cli/main.ts');
    await import('./src/cli/commands/http.ts');
    await import('./src/cli/container.ts');
    const rooms = {};
    for (const url of seen) {
      if (url.includes('/node_modules/@opentelemetry/')) rooms.opentelemetry = (rooms.opentelemetry ?? 0) + 1;
      const at = url.indexOf('/src/');
      if (at >= 0 && url.startsWith('file:')) rooms[url.slice(at + 5).split('/')[0]] = (rooms[url.slice(at + 5).split('/')[0]] ?? 0) + 1;
    }
    console.log(JSON.stringify(rooms));`;
  const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: repoRoot, timeout: 60_000 });
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as Record<string, number>;
}

describe('tuna http: start-up (first byte through a fresh tunnel)', function () {
  this.timeout(120_000);

  it('loads no undici for node:http once keepUndiciLazy ran, and still has http.request and the global WebSocket', async () => {
    const lazy = await loadedAfterHttpImports(true);
    expect(lazy).to.deep.equal({ undici: false, namedWebSocket: false, globalWebSocket: 'function', request: 'function' });
  });

  it('loads none of the translators (nor the CRD codecs they use, nor the OpenTelemetry SDK): the agent room leaves translateObjects to its second entry', async () => {
    const rooms = await roomsLoadedByHttpImports();
    // the rooms tuna http does use are seen, so a hook that saw nothing cannot pass
    expect(rooms.dataplane ?? 0, JSON.stringify(rooms)).to.be.greaterThan(10);
    expect(rooms.tunnel ?? 0, JSON.stringify(rooms)).to.be.greaterThan(5);
    expect(rooms.agent ?? 0, JSON.stringify(rooms)).to.be.greaterThan(0);
    // nor the OpenTelemetry SDK: tracing is off unless an endpoint is named (src/dataplane/tracing.ts)
    expect({ translate: rooms.translate ?? 0, crd: rooms.crd ?? 0, codec: rooms.codec ?? 0, operator: rooms.operator ?? 0, edge: rooms.edge ?? 0, opentelemetry: rooms.opentelemetry ?? 0 }).to.deep.equal({
      translate: 0,
      crd: 0,
      codec: 0,
      operator: 0,
      edge: 0,
      opentelemetry: 0,
    });
  });

  it('loads undici through the node:http namespace without it (what keepUndiciLazy avoids)', async () => {
    const eager = await loadedAfterHttpImports(false);
    expect(eager.undici).to.equal(true);
    expect(eager.namedWebSocket).to.equal(true);
  });
});
