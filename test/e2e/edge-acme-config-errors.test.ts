import { expect } from 'chai';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EdgeConfigError, loadEdgeConfig, startEdge } from '../../src/edge/index.js';

// The directory URL is never contacted: the start fails on the account key before any order.
const ACME_NEVER_CONTACTED = 'https://127.0.0.1:9/dir';

describe('edge with an acme section: start-up errors', () => {
  let dir: string;
  beforeEach(async () => (dir = await mkdtemp(join(tmpdir(), 'tuna-edge-acme-errors-'))));
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const table: { why: string; accountKeyFile: string; prepare?: () => Promise<void>; detail: RegExp }[] = [
    { why: 'an account key file in a folder that does not exist', accountKeyFile: 'missing/acme-account.pem', detail: /ENOENT/ },
    {
      why: 'an account key file that holds no key',
      accountKeyFile: 'acme-account.pem',
      prepare: () => writeFile(join(dir, 'acme-account.pem'), 'not a key\n'),
      detail: /ERR_OSSL_/,
    },
  ];
  for (const { why, accountKeyFile, prepare, detail } of table) {
    it(`refuses to start with ${why}, naming acme.accountKeyFile, and leaves no half-written key file`, async () => {
      await prepare?.();
      const yaml = [
        'listen: { tunnel: { host: 127.0.0.1, port: 0 }, https: { host: 127.0.0.1, port: 0 } }',
        `store: { url: ${JSON.stringify(join(dir, 'edge.db'))}, baseDomain: edge.test }`,
        `acme: { directoryUrl: ${JSON.stringify(ACME_NEVER_CONTACTED)}, accountKeyFile: ${JSON.stringify(accountKeyFile)} }`,
        '',
      ].join('\n');
      await writeFile(join(dir, 'edge.yaml'), yaml);
      const err = await startEdge(await loadEdgeConfig(join(dir, 'edge.yaml'))).then(
        async (edge) => {
          await edge.close();
          return undefined;
        },
        (e: unknown) => e,
      );
      expect(err).to.be.instanceOf(EdgeConfigError);
      expect((err as Error).message).to.match(/^invalid edge config: acme\.accountKeyFile: cannot read or create /);
      expect((err as Error).message).to.match(detail);
      // No half-written key file is left next to the config.
      expect((await readdir(dir)).filter((name) => name.includes('acme-account.pem.'))).to.deep.equal([]);
    });
  }
});
