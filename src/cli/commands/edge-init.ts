import * as t from 'io-ts';
import { EdgeAlreadyInitializedError, initEdge, openStore, storeBackendOf, StoreConflictError } from '../../edge/index.js';
import type { Store } from '../../edge/index.js';
import { EdgeInitializedError, EdgeStoreOpenError } from '../control-errors.js';
import { printResult, printTokenWarning } from '../control-output.js';
import { edgeInitHelp } from '../control-help.js';
import { UsageError } from '../errors.js';
import { decodeFlags, parseFlags } from '../flags.js';
import type { CliIo } from '../io.js';
import { formatTable } from '../table.js';
import { pick } from './http.js';

const options = { store: { type: 'string' }, schema: { type: 'string' }, account: { type: 'string' }, 'key-name': { type: 'string' }, json: { type: 'boolean' } } as const;

const InitFlags = t.intersection([t.type({ store: t.string }), t.partial({ 'schema': t.string, 'account': t.string, 'key-name': t.string, 'json': t.boolean })]);

const isPostgres = (url: string) => storeBackendOf(url) === 'postgres';

/**
 * edgeInitCommand is `tuna edge init --store <sqlite path | postgres:// url>`: it works on the
 * edge's store directly (no edge needs to run), creates the first account and an `admin` API key,
 * and prints the key once. A store that already has an account is refused and left unchanged:
 * there is deliberately no `--force`, because a second init would mint another admin key that
 * nobody asked the existing admins for; they create keys with `tuna keys create --scope admin`.
 */
export async function edgeInitCommand(args: string[], io: CliIo): Promise<number> {
  const parsed = parseFlags(args, options, 'edge init');
  if (parsed.values.help === true) return (io.out(edgeInitHelp), 0);
  if (parsed.values.store === undefined) throw new UsageError('tuna edge init: --store is required: a SQLite file path or a postgres:// URL (see tuna edge init --help)');
  if (parsed.positionals.length > 0) throw new UsageError(`tuna edge init: unexpected argument ${JSON.stringify(parsed.positionals[0])}`);
  const flags = decodeFlags(InitFlags, pick(parsed.values, Object.keys(options)), 'edge init');
  if (flags.schema !== undefined && !isPostgres(flags.store)) throw new UsageError('tuna edge init: --schema applies to postgres:// stores only');
  const store = await open(flags.store, flags.schema);
  try {
    const result = await initEdge(store, {
      ...(flags.account !== undefined ? { accountName: flags.account } : {}),
      ...(flags['key-name'] !== undefined ? { keyName: flags['key-name'] } : {}),
      actor: 'cli:edge-init',
    }).catch((err: unknown) => {
      // Two inits racing on one PostgreSQL database: the loser hits the unique account name.
      if (err instanceof EdgeAlreadyInitializedError || err instanceof StoreConflictError) throw new EdgeInitializedError();
      throw err;
    });
    const { account, adminKey } = result;
    const json = { account, apiKey: adminKey.record, token: adminKey.token };
    printResult(io, flags.json === true, json, () => {
      const table = formatTable(['ACCOUNT', 'ACCOUNT-ID', 'KEY-ID', 'SCOPES'], [[account.name, account.id, adminKey.record.id, adminKey.record.scopes.join(',')]]);
      return `${table}\n\n${adminKey.token}`;
    });
    printTokenWarning(io);
    return 0;
  } finally {
    await store.close();
  }
}

async function open(url: string, schema: string | undefined): Promise<Store> {
  try {
    return await openStore({ url, schema });
  } catch (err) {
    // Never echo the URL: a postgres:// URL may hold a password.
    const code = (err as { code?: string }).code;
    const why = `${code === undefined ? '' : `${code}: `}${(err as Error).message}`;
    throw new EdgeStoreOpenError(`cannot open the ${isPostgres(url) ? 'PostgreSQL' : 'SQLite'} store: ${why}`, { cause: err });
  }
}
