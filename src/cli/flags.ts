import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';
import { isLeft } from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { UsageError } from './errors.js';

/**
 * Flags are parsed by `node:util` parseArgs (strings and booleans) and then validated with io-ts
 * codecs at this boundary, so commands receive typed, checked options.
 */

/** PortString decodes a TCP port given as text ("8080"). */
export const PortString = new t.Type<number, string, unknown>(
  'port',
  (u): u is number => typeof u === 'number' && Number.isInteger(u) && u > 0 && u < 65536,
  (u, c) => {
    if (typeof u !== 'string' || !/^\d{1,5}$/.test(u)) return t.failure(u, c, 'must be a port number');
    const n = Number(u);
    return n > 0 && n < 65536 ? t.success(n) : t.failure(u, c, 'must be between 1 and 65535');
  },
  String,
);

/** PortOrZeroString decodes a port where 0 means "any". */
export const PortOrZeroString = new t.Type<number, string, unknown>(
  'port-or-0',
  (u): u is number => typeof u === 'number',
  (u, c) => (u === '0' ? t.success(0) : PortString.validate(u, c)),
  String,
);

/** PositiveIntString decodes a small positive count ("2"). */
export const PositiveIntString = new t.Type<number, string, unknown>(
  'count',
  (u): u is number => typeof u === 'number',
  (u, c) => (typeof u === 'string' && /^[1-9]\d{0,2}$/.test(u) ? t.success(Number(u)) : t.failure(u, c, 'must be a whole number from 1 to 999')),
  String,
);

/** SecondsString decodes a duration in whole seconds ("30"), 0 to 86400. */
export const SecondsString = new t.Type<number, string, unknown>(
  'seconds',
  (u): u is number => typeof u === 'number',
  (u, c) => (typeof u === 'string' && /^\d{1,5}$/.test(u) && Number(u) <= 86400 ? t.success(Number(u)) : t.failure(u, c, 'must be whole seconds from 0 to 86400')),
  String,
);

/** MillisecondsString decodes a positive duration in whole milliseconds ("500"), 1 to 86,400,000 (a day). */
export const MillisecondsString = new t.Type<number, string, unknown>(
  'milliseconds',
  (u): u is number => typeof u === 'number',
  (u, c) => (typeof u === 'string' && /^[1-9]\d{0,7}$/.test(u) && Number(u) <= 86_400_000 ? t.success(Number(u)) : t.failure(u, c, 'must be whole milliseconds from 1 to 86400000')),
  String,
);

/** HostnameString decodes a DNS name (exact, lowercase letters, digits, dashes and dots). */
export const HostnameString = new t.Type<string, string, unknown>(
  'hostname',
  (u): u is string => typeof u === 'string',
  (u, c) =>
    typeof u === 'string' && /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/.test(u.toLowerCase())
      ? t.success(u.toLowerCase())
      : t.failure(u, c, 'must be a DNS name such as app.example.com'),
  String,
);

/** ListenAddress is where a server listens: a host (absent: every interface) and a port (0: any). */
export interface ListenAddress {
  host?: string;
  port: number;
}

/** ListenAddressString decodes `HOST:PORT`, `[IPv6]:PORT` or `:PORT` (every interface). */
export const ListenAddressString = new t.Type<ListenAddress, string, unknown>(
  'listen-address',
  (u): u is ListenAddress => typeof u === 'object' && u !== null && 'port' in u,
  (u, c) => {
    const m = typeof u === 'string' ? /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]*):(\d{1,5})$/.exec(u) : null;
    if (!m || Number(m[2]) > 65535) return t.failure(u, c, 'must be HOST:PORT, [IPv6]:PORT or :PORT');
    const host = m[1]!.replace(/^\[|\]$/g, '');
    return t.success(host === '' ? { port: Number(m[2]) } : { host, port: Number(m[2]) });
  },
  (a) => `${a.host?.includes(':') === true ? `[${a.host}]` : (a.host ?? '')}:${a.port}`,
);

/** ParsedArgs is what parseArgs returns, before validation. */
export interface ParsedArgs {
  values: Record<string, string | boolean | string[] | boolean[] | undefined>;
  positionals: string[];
}

/** parseFlags runs parseArgs and turns its errors into UsageError. */
export function parseFlags(args: string[], options: NonNullable<ParseArgsConfig['options']>, command: string): ParsedArgs {
  try {
    const parsed = parseArgs({ args, options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true });
    return { values: parsed.values as ParsedArgs['values'], positionals: parsed.positionals };
  } catch (err) {
    throw new UsageError(`tuna ${command}: ${(err as Error).message} (see tuna ${command} --help)`);
  }
}

/** decodeFlags validates flag values with a codec, naming every bad flag in one message. */
export function decodeFlags<C extends t.Mixed>(codec: C, values: unknown, command: string): t.TypeOf<C> {
  const result = codec.decode(values);
  if (!isLeft(result)) return result.right as t.TypeOf<C>;
  const problems = result.left.map((e) => {
    const key = e.context
      .map((c) => c.key)
      .filter((k) => k !== '' && !/^\d+$/.test(k))
      .join('.');
    const why = e.message ?? 'has an invalid value';
    return `--${key || '?'} ${JSON.stringify(e.value)} ${why}`;
  });
  throw new UsageError(`tuna ${command}: ${[...new Set(problems)].join('; ')}`);
}
