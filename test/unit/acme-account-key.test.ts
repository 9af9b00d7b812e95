import { expect } from 'chai';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadOrCreateAccountKey, publicJwk } from '../../src/edge/acme/index.js';

describe('acme account key file', () => {
  let dir: string;
  beforeEach(async () => (dir = await mkdtemp(join(tmpdir(), 'tuna-acme-key-'))));
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('creates a P-256 key readable only by its owner and returns the same key next time', async () => {
    const path = join(dir, 'account.pem');
    const first = await loadOrCreateAccountKey(path);
    expect((await stat(path)).mode & 0o777).to.equal(0o600);
    const again = await loadOrCreateAccountKey(path);
    expect(publicJwk(again)).to.deep.equal(publicJwk(first));
  });

  it('gives two concurrent first starts one key', async () => {
    const path = join(dir, 'account.pem');
    const [a, b] = await Promise.all([loadOrCreateAccountKey(path), loadOrCreateAccountKey(path)]);
    expect(publicJwk(a)).to.deep.equal(publicJwk(b));
  });

  it('refuses a file that is not a key instead of replacing it', async () => {
    const path = join(dir, 'account.pem');
    await writeFile(path, 'not a key');
    const err = await loadOrCreateAccountKey(path).then(() => undefined, (e: Error) => e);
    expect(err).to.be.instanceOf(Error);
  });
});
