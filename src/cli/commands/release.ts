import { controlFlagOptions, resolveControlContext } from '../control-options.js';
import { printResult, reservationTable } from '../control-output.js';
import { ControlNotFoundError } from '../control-errors.js';
import { releaseHelp } from '../control-help.js';
import { UsageError } from '../errors.js';
import { parseFlags } from '../flags.js';
import type { CliIo } from '../io.js';
import { pick } from './http.js';
import { KIND_ALIASES } from './reserve.js';

/**
 * releaseCommand is `tuna release <domain|tcp|address> <id|value>`. The control API releases by
 * id; a value (`app.example.com`, `30001`, `127.77.0.3`) is looked up among the account's held
 * reservations of that kind first, so scripts can release what they reserved without keeping ids.
 */
export async function releaseCommand(args: string[], io: CliIo): Promise<number> {
  const parsed = parseFlags(args, controlFlagOptions, 'release');
  if (parsed.values.help === true) return (io.out(releaseHelp), 0);
  const [word, target, ...extra] = parsed.positionals;
  const kind = word === undefined ? undefined : KIND_ALIASES[word];
  if (kind === undefined || target === undefined) throw new UsageError('tuna release: expected <domain|tcp|address> <id|value> (see tuna release --help)');
  if (extra.length > 0) throw new UsageError(`tuna release: unexpected argument ${JSON.stringify(extra[0])}`);
  const ctx = await resolveControlContext(pick(parsed.values, Object.keys(controlFlagOptions)), io.env, 'release');
  const { reservations } = await ctx.client.listReservations();
  const ofKind = reservations.filter((r) => r.kind === kind);
  const wanted = target.toLowerCase().replace(/\.$/, '');
  const match = ofKind.find((r) => r.id === target) ?? ofKind.find((r) => r.value === wanted);
  if (!match) throw new ControlNotFoundError(`no ${kind} reservation ${JSON.stringify(target)} held by this account (see tuna reserve list)`);
  const released = await ctx.client.release(match.id);
  printResult(io, ctx.isJson, released, () =>
    reservationTable([released.reservation], { header: 'REVOKED-KEYS', cell: () => released.revokedTunnelKeyIds.join(',') }),
  );
  if (!ctx.isJson) io.err(`released ${kind} ${released.reservation.value}; ${released.revokedTunnelKeyIds.length} tunnel key(s) bound to it revoked`);
  return 0;
}
