import { isIP } from 'node:net';
import { isLeft } from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { controlFlagOptions, LabelString, labelsFrom, resolveControlContext } from '../control-options.js';
import { printResult, reservationTable } from '../control-output.js';
import type { ReservationKind, ReservationRequest } from '../../control-api/index.js';
import { reserveHelp } from '../control-help.js';
import { UsageError } from '../errors.js';
import { HostnameString, PortOrZeroString, decodeFlags, parseFlags } from '../flags.js';
import type { CliIo } from '../io.js';
import { findHeldReservation } from '../reservation-lookup.js';
import { pick } from './http.js';

const options = { ...controlFlagOptions, name: { type: 'string' }, label: { type: 'string', multiple: true } } as const;

const ReserveFlags = t.partial({ name: t.string, label: t.array(LabelString) });

/** KIND_ALIASES maps the words the CLI takes to the control API's reservation kinds. */
export const KIND_ALIASES: Record<string, ReservationKind> = { domain: 'domain', tcp: 'tcp-port', 'tcp-port': 'tcp-port', address: 'address' };

/**
 * reserveCommand is `tuna reserve domain <host>`, `tuna reserve tcp [port]`, `tuna reserve address [ip]`,
 * `tuna reserve list` and `tuna reserve verify <host|id>` (a custom domain's DNS TXT proof).
 */
export async function reserveCommand(args: string[], io: CliIo): Promise<number> {
  const parsed = parseFlags(args, options, 'reserve');
  if (parsed.values.help === true) return (io.out(reserveHelp), 0);
  const [word, value, ...extra] = parsed.positionals;
  if (extra.length > 0) throw new UsageError(`tuna reserve: unexpected argument ${JSON.stringify(extra[0])}`);
  const flags = decodeFlags(ReserveFlags, pick(parsed.values, ['name', 'label']), 'reserve');
  const controlValues = pick(parsed.values, Object.keys(controlFlagOptions));
  if (word === 'list') {
    if (value !== undefined || flags.name !== undefined) throw new UsageError('tuna reserve list: takes only --label filters');
    const ctx = await resolveControlContext(controlValues, io.env, 'reserve list');
    const { reservations } = await ctx.client.listReservations(labelsFrom(flags.label));
    printResult(io, ctx.isJson, reservations, () => reservationTable(reservations));
    return 0;
  }
  if (word === 'verify') {
    if (value === undefined || flags.name !== undefined || flags.label !== undefined) throw new UsageError('tuna reserve verify: expected one <hostname|id> and no --name/--label');
    const ctx = await resolveControlContext(controlValues, io.env, 'reserve verify');
    const held = await findHeldReservation(ctx.client, 'domain', value);
    const { reservation } = await ctx.client.verifyDomain(held.id);
    printResult(io, ctx.isJson, reservation, () => reservationTable([reservation]));
    return 0;
  }
  const request = {
    ...toRequest(word, value),
    ...(flags.name !== undefined ? { name: flags.name } : {}),
    ...(flags.label !== undefined ? { labels: labelsFrom(flags.label) } : {}),
  } as ReservationRequest;
  const ctx = await resolveControlContext(controlValues, io.env, 'reserve');
  const answer = await ctx.client.reserve(request);
  printResult(io, ctx.isJson, answer, () => reservationTable([answer.reservation], { header: 'RESULT', cell: () => (answer.created ? 'created' : 'adopted') }));
  const { reservation } = answer;
  if (reservation.kind === 'domain' && !reservation.verified && reservation.verificationToken !== null && !ctx.isJson) {
    // The token is public by design (it goes into DNS), so printing it is safe (docs/edge-store.md).
    io.err(`to verify ${reservation.value}, publish a DNS TXT record _tuna-challenge.${reservation.value} = "${reservation.verificationToken}", then run tuna reserve verify ${reservation.value}`);
  }
  return 0;
}

/** toRequest reads `<kind> [value]` into a reservation request, validated here (a usage error, exit 2). */
function toRequest(word: string | undefined, value: string | undefined): ReservationRequest {
  const kind = word === undefined ? undefined : KIND_ALIASES[word];
  switch (kind) {
    case 'domain':
      if (value === undefined) throw new UsageError('tuna reserve domain: the hostname is required, e.g. app.<base domain> or www.example.com');
      return { kind, hostname: decodePositional(HostnameString, value, 'reserve domain', 'is not a DNS name such as app.example.com') };
    case 'tcp-port': {
      const port = value === undefined ? 0 : decodePositional(PortOrZeroString, value, 'reserve tcp', 'is not a port (1-65535, or 0 for any port of the pool)');
      return port === 0 ? { kind } : { kind, port };
    }
    case 'address':
      if (value !== undefined && isIP(value) === 0) throw new UsageError(`tuna reserve address: ${JSON.stringify(value)} is not an IP address`);
      return value === undefined ? { kind } : { kind, address: value };
    default:
      throw new UsageError(`tuna reserve: expected domain <host>, tcp [port], address [ip], list or verify <host>${word === undefined ? '' : `, not ${JSON.stringify(word)}`} (see tuna reserve --help)`);
  }
}

function decodePositional<A>(codec: t.Decoder<unknown, A>, value: string, command: string, why: string): A {
  const result = codec.decode(value);
  if (isLeft(result)) throw new UsageError(`tuna ${command}: ${JSON.stringify(value)} ${why}`);
  return result.right;
}
