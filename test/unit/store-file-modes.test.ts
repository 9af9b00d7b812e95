import { expect } from 'chai';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStore } from '../../src/edge/store/index.js';

/** The SQLite store holds certificate keys; its files are the owner's only. */
describe('store: SQLite files are created 0600', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tuna-store-modes-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const modeOf = async (file: string) => (await stat(file)).mode & 0o777;

  it('creates the database, its WAL and its SHM file with mode 0600', async () => {
    const path = join(dir, 'edge.db');
    const store = await openSqliteStore(path);
    try {
      await store.createAccount({ name: 'acme' }, 'test');
      for (const file of [path, `${path}-wal`, `${path}-shm`]) expect(await modeOf(file), file).to.equal(0o600);
    } finally {
      await store.close();
    }
  });

  it('tightens a database file left 0644 by an earlier version', async () => {
    const path = join(dir, 'old.db');
    await writeFile(path, '', { mode: 0o644 });
    expect(await modeOf(path)).to.equal(0o644 & ~process.umask());
    const store = await openSqliteStore(path);
    try {
      expect(await modeOf(path)).to.equal(0o600);
    } finally {
      await store.close();
    }
  });
});
