import { expect } from 'chai';
import { fileURLToPath } from 'node:url';
import { freePort, outputPattern, readDocSection, runScript, userEnv } from '../support/doc-commands.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const doc = fileURLToPath(new URL('../../docs/quickstart.md', import.meta.url));

/**
 * docs/quickstart.md, "One machine", run as written: its `sh` blocks in one bash from the clone,
 * with the machine's own Node first on PATH (as a new user has it) and free ports in the variables
 * the doc sets; every `text` block is output the walk must print.
 */
describe('docs/quickstart.md: one machine', function () {
  this.timeout(240_000);

  it('runs every command of the section verbatim: edge init, a store-mode edge, keys, a reservation, tuna http, a request, a quiet stop', async () => {
    const section = readDocSection(doc, 'One machine');
    expect(section.script).to.contain('tuna edge init');
    expect(section.outputs.length).to.be.greaterThan(0);
    const ports = { TUNNEL_PORT: String(await freePort()), HTTP_PORT: String(await freePort()), APP_PORT: String(await freePort()) };
    // The request inspector on a free port (tests never take the fixed 4040 it defaults to).
    const ran = await runScript(section.script, repoRoot, { ...userEnv(ports), TUNA_INSPECT: '127.0.0.1:0' }, 200_000);
    expect(ran.code, `stdout:\n${ran.stdout}\nstderr:\n${ran.stderr}`).to.equal(0);
    for (const block of section.outputs) expect(ran.stdout).to.match(outputPattern(block));
    expect(ran.stdout).to.contain(`tuna edge: tunnel listener on port ${ports.TUNNEL_PORT}, public HTTP on port ${ports.HTTP_PORT}`);
    // A quiet stop: each process says it is stopping, once, and nothing else goes wrong.
    expect(ran.stderr).to.contain('SIGTERM: closing tunnels');
    expect(ran.stderr).to.contain('SIGTERM: draining the edge');
    expect(ran.stderr).not.to.match(/^\s+at |Error|aborted|unexpected/im);
  });
});
