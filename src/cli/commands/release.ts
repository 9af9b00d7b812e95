import { controlFlagOptions, resolveControlContext } from '../control-options.js';
import { printResult, reservationTable } from '../control-output.js';
import { releaseHelp } from '../control-help.js';
import { UsageError } from '../errors.js';
import * as t from 'io-ts';
import { SecondsString, decodeFlags, parseFlags } from '../flags.js';
import type { CliIo } from '../io.js';
import { findHeldReservation } from '../reservation-lookup.js';
import { pick } from './http.js';
import { releaseCluster } from './release-cluster.js';
import { KIND_ALIASES } from './reserve.js';

/**
 * releaseCommand is `tuna release <domain|tcp|address> <id|value>`: the reservation is found by id
 * or value among the account's held ones of that kind, then released by id.
 */
export async function releaseCommand(args: string[], io: CliIo): Promise<number> {
  const parsed = parseFlags(args, releaseOptions, 'release');
  if (parsed.values.help === true) return (io.out(releaseHelp), 0);
  if (parsed.values['cluster-id'] !== undefined) return releaseClusterCommand(parsed.values, parsed.positionals, io);
  const [word, target, ...extra] = parsed.positionals;
  const kind = word === undefined ? undefined : KIND_ALIASES[word];
  if (kind === undefined || target === undefined) throw new UsageError('tuna release: expected <domain|tcp|address> <id|value> (see tuna release --help)');
  if (extra.length > 0) throw new UsageError(`tuna release: unexpected argument ${JSON.stringify(extra[0])}`);
  const ctx = await resolveControlContext(pick(parsed.values, Object.keys(controlFlagOptions)), io.env, 'release');
  const match = await findHeldReservation(ctx.client, kind, target);
  const released = await ctx.client.release(match.id);
  printResult(io, ctx.isJson, released, () =>
    reservationTable([released.reservation], { header: 'REVOKED-KEYS', cell: () => released.revokedTunnelKeyIds.join(',') }),
  );
  if (!ctx.isJson) io.err(`released ${kind} ${released.reservation.value}; ${released.revokedTunnelKeyIds.length} tunnel key(s) bound to it revoked`);
  return 0;
}

const releaseOptions = { ...controlFlagOptions, 'cluster-id': { type: 'string' }, settle: { type: 'string' } } as const;
const ClusterFlags = t.intersection([t.type({ 'cluster-id': t.string }), t.partial({ settle: SecondsString })]);

/**
 * releaseClusterCommand is `tuna release --cluster-id ID [--settle S]`: everything an operator of
 * that cluster holds at the edge (its reservations, with their keys, and any key left), as the
 * chart's uninstall hook runs it; passes repeat until nothing new appears for --settle seconds.
 */
async function releaseClusterCommand(values: Record<string, unknown>, positionals: string[], io: CliIo): Promise<number> {
  if (positionals.length > 0) throw new UsageError(`tuna release: --cluster-id takes no ${JSON.stringify(positionals[0])}`);
  const flags = decodeFlags(ClusterFlags, pick(values, ['cluster-id', 'settle']), 'release');
  if (flags['cluster-id'] === '') throw new UsageError('tuna release: --cluster-id must not be empty');
  const ctx = await resolveControlContext(pick(values, Object.keys(controlFlagOptions)), io.env, 'release');
  const settleMs = (flags.settle ?? 10) * 1000;
  const result = await releaseCluster(ctx.client, flags['cluster-id'], io, { settleMs, maxMs: settleMs + 120_000 });
  if (ctx.isJson) io.out(JSON.stringify(result));
  else io.err(`cluster ${flags['cluster-id']}: ${result.released} reservation(s) released, ${result.retained > 0 ? `${result.retained} kept (reclaimPolicy Retain), ` : ''}${result.revoked} tunnel key(s) revoked${result.isSettled ? '' : ' (stopped before it settled)'}`);
  return result.isSettled ? 0 : 1;
}
