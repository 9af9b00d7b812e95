import { readFile } from 'node:fs/promises';
import * as t from 'io-ts';
import { ControlClient } from '../control-api/index.js';
import type { ControlEndpoint } from '../control-api/index.js';
import { UsageError } from './errors.js';
import { decodeFlags } from './flags.js';

/**
 * The flags every control-plane command (`tuna keys|reserve|release`) takes, and the codecs of
 * their values. The control API listens on the edge's tunnel listener (docs/edge-store.md), so
 * `TUNA_EDGE` of the agent commands (`tls://HOST:PORT`, `tcp://HOST:PORT`, `HOST:PORT`) works here
 * as well as an `https://` / `http://` URL.
 */

/** controlFlagOptions are the parseArgs options shared by the control commands. */
export const controlFlagOptions = {
  edge: { type: 'string' },
  'api-key': { type: 'string' },
  'api-key-file': { type: 'string' },
  ca: { type: 'string' },
  json: { type: 'boolean' },
} as const;

/** controlFlagsHelp documents controlFlagOptions for --help. */
export const controlFlagsHelp = `Edge options (also from the environment):
  --edge URL          the edge's control API: https://HOST:PORT (its tunnel listener)   ($TUNA_EDGE)
                      tls://HOST:PORT and HOST:PORT mean https, tcp://HOST:PORT means http
  --api-key KEY       an account API key, tuna_ak_...                                   ($TUNA_API_KEY)
  --api-key-file FILE read the API key from a file (argv is visible in ps)
  --ca FILE           trust this CA (PEM) for the edge's certificate
  --json              print JSON instead of a table`;

const ControlFlagsCodec = t.partial({ 'edge': t.string, 'api-key': t.string, 'api-key-file': t.string, 'ca': t.string, 'json': t.boolean });

/** parseControlUrl reads the edge's control URL; a wrong one is a usage error before anything is dialed. */
export function parseControlUrl(text: string): URL {
  const trimmed = text.trim();
  const m = /^(?:([a-z]+):\/\/)?(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(?::(\d{1,5}))?\/?$/.exec(trimmed);
  const scheme = { 'https': 'https', 'tls': 'https', 'http': 'http', 'tcp': 'http', '': 'https' }[m?.[1] ?? ''];
  const port = m?.[3] === undefined ? undefined : Number(m[3]);
  const isPortless = port === undefined && (m?.[1] === 'https' || m?.[1] === 'http');
  if (!m || scheme === undefined || (port === undefined && !isPortless) || (port !== undefined && (port < 1 || port > 65535))) {
    throw new UsageError(`--edge ${JSON.stringify(text)} is not an edge URL; expected https://HOST:PORT, http://HOST:PORT, tls://HOST:PORT, tcp://HOST:PORT or HOST:PORT`);
  }
  return new URL(`${scheme}://${m[2]!}${port === undefined ? '' : `:${port}`}`);
}

/** ControlContext is what a control command needs: a client and the output format. */
export interface ControlContext {
  client: ControlClient;
  isJson: boolean;
  /** where the client talks to, and the key it sends (`tuna status` reads the edge's /metrics with them) */
  endpoint: ControlEndpoint;
  apiKey: string;
}

/** resolveControlContext validates the edge flags, falling back to TUNA_EDGE and TUNA_API_KEY. */
export async function resolveControlContext(values: unknown, env: NodeJS.ProcessEnv, command: string): Promise<ControlContext> {
  const flags = decodeFlags(ControlFlagsCodec, values, command);
  const address = flags.edge ?? env.TUNA_EDGE;
  if (address === undefined || address === '') throw new UsageError(`tuna ${command}: no edge given; pass --edge URL or set TUNA_EDGE`);
  const url = parseControlUrl(address);
  const endpoint: ControlEndpoint = { url };
  if (flags.ca !== undefined) {
    if (url.protocol !== 'https:') throw new UsageError(`tuna ${command}: --ca applies to https:// edges only`);
    Object.assign(endpoint, { ca: await readText(flags.ca, '--ca') });
  }
  let apiKey = flags['api-key'] ?? env.TUNA_API_KEY;
  if (flags['api-key-file'] !== undefined) apiKey = (await readText(flags['api-key-file'], '--api-key-file')).trim();
  if (apiKey === undefined || apiKey === '') throw new UsageError(`tuna ${command}: no API key given; pass --api-key, --api-key-file or set TUNA_API_KEY`);
  return { client: new ControlClient(endpoint, apiKey), isJson: flags.json === true, endpoint, apiKey };
}

/** LabelString decodes `key=value` (the value may hold `=`). */
export const LabelString = new t.Type<[string, string], string, unknown>(
  'label',
  (u): u is [string, string] => Array.isArray(u) && u.length === 2,
  (u, c) => {
    const eq = typeof u === 'string' ? u.indexOf('=') : -1;
    return typeof u === 'string' && eq > 0 ? t.success([u.slice(0, eq), u.slice(eq + 1)]) : t.failure(u, c, 'must be key=value');
  },
  ([k, v]) => `${k}=${v}`,
);

/** labelsFrom turns decoded `--label` flags into a label map (undefined when none were given). */
export function labelsFrom(pairs: readonly (readonly [string, string])[] | undefined): Record<string, string> | undefined {
  return pairs === undefined || pairs.length === 0 ? undefined : Object.fromEntries(pairs);
}

const UNIT_SECONDS: Record<string, number> = { d: 86400, h: 3600, m: 60, s: 1 };

/**
 * DurationString decodes a lifetime such as `720h`, `30d` or `1h30m` into whole seconds (units
 * d, h, m, s, in that order, as Go's time.ParseDuration writes them, plus days).
 */
export const DurationString = new t.Type<number, string, unknown>(
  'duration',
  (u): u is number => typeof u === 'number',
  (u, c) => {
    if (typeof u !== 'string' || !/^(\d+d)?(\d+h)?(\d+m)?(\d+s)?$/.test(u) || u === '') return t.failure(u, c, 'must be a duration such as 720h, 30d or 1h30m');
    let seconds = 0;
    for (const [, n, unit] of u.matchAll(/(\d+)([dhms])/g)) seconds += Number(n) * UNIT_SECONDS[unit!]!;
    return seconds > 0 && Number.isSafeInteger(seconds) ? t.success(seconds) : t.failure(u, c, 'must be longer than 0s');
  },
  (n) => `${n}s`,
);

async function readText(path: string, flag: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    throw new UsageError(`${flag} ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}
