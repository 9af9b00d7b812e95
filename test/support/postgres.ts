import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { openPostgresStore, openSqliteStore } from '../../src/edge/store/index.js';
import type { Clock, Store } from '../../src/edge/store/index.js';

/**
 * One throwaway PostgreSQL server for the whole test run, started lazily by the first suite that
 * asks (hack/postgres.sh does the work: install if missing, initdb, start on a free loopback port)
 * and stopped when the process exits. Each caller gets its own fresh schema, so suites never see
 * each other's rows. When PostgreSQL cannot be installed or started, every caller gets the same
 * clear error: the PostgreSQL tests fail, they never skip.
 */

const run = promisify(execFile);
const SCRIPT = fileURLToPath(new URL('../../hack/postgres.sh', import.meta.url));

/** PostgresTarget is where a test's store should connect. */
export interface PostgresTarget {
  readonly connectionString: string;
  readonly schema: string;
}

let server: Promise<string> | undefined;
let schemaCount = 0;

/** freePort is a loopback port free at the time of asking. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** sweepOrphans stops servers left behind by test runs that were killed before their exit hook ran. */
function sweepOrphans(): void {
  for (const name of readdirSync(tmpdir())) {
    if (!name.startsWith('tuna-pg-')) continue;
    const dir = join(tmpdir(), name);
    const ownerFile = join(dir, 'owner.pid');
    const owner = existsSync(ownerFile) ? Number(readFileSync(ownerFile, 'utf8')) : NaN;
    if (Number.isInteger(owner) && !isAlive(owner)) spawnSync('bash', [SCRIPT, 'stop', dir], { stdio: 'ignore', timeout: 10_000 });
  }
}

async function startServer(): Promise<string> {
  try {
    await run('bash', [SCRIPT, 'install'], { timeout: 600_000 });
  } catch (err) {
    throw new Error(`PostgreSQL is not available and could not be installed (hack/postgres.sh install): ${(err as Error).message}`, {
      cause: err,
    });
  }
  sweepOrphans();
  let lastError: unknown;
  // A free port can be taken between probing and binding; a few attempts make that harmless.
  for (let attempt = 0; attempt < 3; attempt++) {
    const dir = mkdtempSync(join(tmpdir(), 'tuna-pg-'));
    writeFileSync(join(dir, 'owner.pid'), String(process.pid));
    try {
      const { stdout } = await run('bash', [SCRIPT, 'start', dir, String(await freePort())], { timeout: 60_000 });
      process.once('exit', () => {
        spawnSync('bash', [SCRIPT, 'stop', dir], { stdio: 'ignore', timeout: 10_000 });
      });
      return stdout.trim();
    } catch (err) {
      lastError = err;
      spawnSync('bash', [SCRIPT, 'stop', dir], { stdio: 'ignore', timeout: 10_000 });
      rmSync(dir, { recursive: true, force: true });
    }
  }
  throw new Error(`PostgreSQL could not be started (hack/postgres.sh start): ${(lastError as Error).message}`, { cause: lastError });
}

/** sharedPostgres returns the connection URL of the run's server, starting it on first use. */
export function sharedPostgres(): Promise<string> {
  server ??= startServer();
  return server;
}

/** freshPostgresSchema creates an empty schema on the shared server for one test. */
export async function freshPostgresSchema(): Promise<PostgresTarget> {
  const connectionString = await sharedPostgres();
  const schema = `t${process.pid}_${++schemaCount}`;
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    // The name is generated above from digits only; identifiers cannot be bound as parameters.
    await client.query(`CREATE SCHEMA ${schema}`);
  } finally {
    await client.end();
  }
  return { connectionString, schema };
}

/** StoreBackend opens a fresh, empty store of one kind; the contract suites run against each. */
export interface StoreBackend {
  readonly name: 'SQLite' | 'PostgreSQL';
  open(clock: Clock): Promise<Store>;
}

/** STORE_BACKENDS lists both implementations of the edge store. */
export const STORE_BACKENDS: readonly StoreBackend[] = [
  { name: 'SQLite', open: (clock) => openSqliteStore(':memory:', clock) },
  { name: 'PostgreSQL', open: async (clock) => openPostgresStore(await freshPostgresSchema(), clock) },
];

/** FakeClock is a settable clock for expiry and audit times. */
export class FakeClock implements Clock {
  constructor(public time = Date.UTC(2026, 0, 1)) {}
  now(): number {
    return this.time;
  }
  advance(ms: number): void {
    this.time += ms;
  }
}
