import { controlFlagOptions, resolveControlContext } from '../control-options.js';
import { printResult, reservationTable } from '../control-output.js';
import { releaseHelp } from '../control-help.js';
import { UsageError } from '../errors.js';
import { parseFlags } from '../flags.js';
import type { CliIo } from '../io.js';
import { findHeldReservation } from '../reservation-lookup.js';
import { pick } from './http.js';
import { KIND_ALIASES } from './reserve.js';

/**
 * releaseCommand is `tuna release <domain|tcp|address> <id|value>`: the reservation is found by id
 * or value among the account's held ones of that kind, then released by id.
 */
export async function releaseCommand(args: string[], io: CliIo): Promise<number> {
  const parsed = parseFlags(args, controlFlagOptions, 'release');
  if (parsed.values.help === true) return (io.out(releaseHelp), 0);
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
