import * as t from 'io-ts';
import { controlFlagOptions, DurationString, LabelString, labelsFrom, resolveControlContext } from '../control-options.js';
import { apiKeyTable, printResult, printTokenWarning, tunnelKeyTable } from '../control-output.js';
import { UsageError } from '../errors.js';
import { PositiveIntString, decodeFlags, parseFlags } from '../flags.js';
import type { ParsedArgs } from '../flags.js';
import { keysHelp } from '../control-help.js';
import type { CliIo } from '../io.js';
import { pick } from './http.js';

const options = {
  ...controlFlagOptions,
  'tunnel': { type: 'boolean' },
  'scope': { type: 'string', multiple: true },
  'name': { type: 'string' },
  'account': { type: 'string' },
  'reservation': { type: 'string' },
  'protocol': { type: 'string' },
  'max-connections': { type: 'string' },
  'expires': { type: 'string' },
  'label': { type: 'string', multiple: true },
} as const;

const Scope = t.keyof({ reservations: null, tunnels: null, admin: null });
const Protocol = t.keyof({ http: null, https: null, tls: null, tcp: null, udp: null });

const ApiKeyFlags = t.intersection([t.type({ scope: t.array(Scope) }), t.partial({ name: t.string, account: t.string })]);
const TunnelKeyFlags = t.intersection([
  t.type({ reservation: t.string, protocol: Protocol }),
  t.partial({ 'max-connections': PositiveIntString, 'expires': DurationString, 'label': t.array(LabelString) }),
]);
const ListFlags = t.partial({ label: t.array(LabelString), account: t.string });

const KIND_FLAGS: Record<'api' | 'tunnel', readonly string[]> = {
  api: ['scope', 'name', 'account'],
  tunnel: ['reservation', 'protocol', 'max-connections', 'expires', 'label'],
};

/** keysCommand is `tuna keys create|list|revoke`: account API keys, or tunnel keys with `--tunnel`. */
export async function keysCommand(args: string[], io: CliIo): Promise<number> {
  const parsed = parseFlags(args, options, 'keys');
  const [verb, ...rest] = parsed.positionals;
  if (parsed.values.help === true) return (io.out(keysHelp), 0);
  if (verb === undefined) throw new UsageError('tuna keys: a subcommand is required: create, list or revoke (see tuna keys --help)');
  switch (verb) {
    case 'create':
      return createKey(parsed, rest, io);
    case 'list':
      return listKeys(parsed, rest, io);
    case 'revoke':
      return revokeKey(parsed, rest, io);
    default:
      throw new UsageError(`tuna keys: unknown subcommand ${JSON.stringify(verb)}; expected create, list or revoke (see tuna keys --help)`);
  }
}

/** refuseForeignFlags names a flag of the other key kind, so `--scope` with `--tunnel` is not silently ignored. */
function refuseForeignFlags(parsed: ParsedArgs, allowed: readonly string[], verb: string): void {
  const foreign = [...KIND_FLAGS.api, ...KIND_FLAGS.tunnel].filter((f) => !allowed.includes(f) && parsed.values[f] !== undefined);
  if (foreign.length > 0) throw new UsageError(`tuna keys ${verb}: --${foreign[0]!} does not apply here (see tuna keys --help)`);
}

function noMorePositionals(rest: readonly string[], verb: string): void {
  if (rest.length > 0) throw new UsageError(`tuna keys ${verb}: unexpected argument ${JSON.stringify(rest[0])}`);
}

async function createKey(parsed: ParsedArgs, rest: string[], io: CliIo): Promise<number> {
  noMorePositionals(rest, 'create');
  const isTunnel = parsed.values.tunnel === true;
  refuseForeignFlags(parsed, isTunnel ? KIND_FLAGS.tunnel : KIND_FLAGS.api, 'create');
  if (isTunnel) {
    for (const f of ['reservation', 'protocol'])
      if (parsed.values[f] === undefined) throw new UsageError(`tuna keys create --tunnel: --${f} is required (see tuna keys --help)`);
    const flags = decodeFlags(TunnelKeyFlags, pick(parsed.values, KIND_FLAGS.tunnel), 'keys create');
    const ctx = await resolveControlContext(pick(parsed.values, Object.keys(controlFlagOptions)), io.env, 'keys create');
    const minted = await ctx.client.mintTunnelKey({
      reservationId: flags.reservation,
      protocol: flags.protocol,
      ...(flags['max-connections'] !== undefined ? { maxConnections: flags['max-connections'] } : {}),
      ...(flags.expires !== undefined ? { ttlSeconds: flags.expires } : {}),
      ...(flags.label !== undefined ? { labels: labelsFrom(flags.label) } : {}),
    });
    printResult(io, ctx.isJson, minted, () => `${tunnelKeyTable([minted.tunnelKey])}\n\n${minted.token}`);
  } else {
    if (parsed.values.scope === undefined) throw new UsageError('tuna keys create: --scope is required (reservations, tunnels or admin; repeatable), or --tunnel for a tunnel key');
    const flags = decodeFlags(ApiKeyFlags, pick(parsed.values, KIND_FLAGS.api), 'keys create');
    const ctx = await resolveControlContext(pick(parsed.values, Object.keys(controlFlagOptions)), io.env, 'keys create');
    const minted = await ctx.client.createApiKey({
      name: flags.name ?? flags.scope.join('+'),
      scopes: [...new Set(flags.scope)],
      ...(flags.account !== undefined ? { accountId: flags.account } : {}),
    });
    printResult(io, ctx.isJson, minted, () => `${apiKeyTable([minted.apiKey])}\n\n${minted.token}`);
  }
  printTokenWarning(io);
  return 0;
}

async function listKeys(parsed: ParsedArgs, rest: string[], io: CliIo): Promise<number> {
  noMorePositionals(rest, 'list');
  const isTunnel = parsed.values.tunnel === true;
  refuseForeignFlags(parsed, isTunnel ? ['label'] : ['account'], 'list');
  const flags = decodeFlags(ListFlags, pick(parsed.values, ['label', 'account']), 'keys list');
  const ctx = await resolveControlContext(pick(parsed.values, Object.keys(controlFlagOptions)), io.env, 'keys list');
  if (isTunnel) {
    const { tunnelKeys } = await ctx.client.listTunnelKeys(labelsFrom(flags.label));
    printResult(io, ctx.isJson, tunnelKeys, () => tunnelKeyTable(tunnelKeys));
  } else {
    const { apiKeys } = await ctx.client.listApiKeys(flags.account);
    printResult(io, ctx.isJson, apiKeys, () => apiKeyTable(apiKeys));
  }
  return 0;
}

async function revokeKey(parsed: ParsedArgs, rest: string[], io: CliIo): Promise<number> {
  const [id, ...extra] = rest;
  if (id === undefined) throw new UsageError('tuna keys revoke: the key id is required (see tuna keys list)');
  noMorePositionals(extra, 'revoke');
  const isTunnel = parsed.values.tunnel === true;
  refuseForeignFlags(parsed, isTunnel ? [] : ['account'], 'revoke');
  const flags = decodeFlags(ListFlags, pick(parsed.values, ['account']), 'keys revoke');
  const ctx = await resolveControlContext(pick(parsed.values, Object.keys(controlFlagOptions)), io.env, 'keys revoke');
  if (isTunnel) {
    const { tunnelKey } = await ctx.client.revokeTunnelKey(id);
    printResult(io, ctx.isJson, tunnelKey, () => tunnelKeyTable([tunnelKey]));
  } else {
    const { apiKey } = await ctx.client.revokeApiKey(id, flags.account);
    printResult(io, ctx.isJson, apiKey, () => apiKeyTable([apiKey]));
  }
  if (!ctx.isJson) io.err(`revoked ${isTunnel ? 'tunnel key' : 'API key'} ${id}`);
  return 0;
}
