import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { runCli } from '../../src/cli/main.js';
import type { CliIo } from '../../src/cli/io.js';

describe('tuna --version', () => {
  it('prints the version of package.json and exits 0', async () => {
    const out: string[] = [];
    const io: CliIo = { out: (s) => out.push(s), err: (s) => out.push(`err: ${s}`), env: {}, stopSignal: new Promise(() => undefined) };
    const version = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
    expect(await runCli(['--version'], io)).to.equal(0);
    expect(out).to.deep.equal([`tuna ${version}`]);
  });
});
