import { readFile } from 'node:fs/promises';
import * as t from 'io-ts';
import type { EdgeEndpoint } from '../tunnel/index.js';
import { UsageError } from './errors.js';
import { PositiveIntString, decodeFlags } from './flags.js';

/** agentFlagOptions are the flags every agent command (http, tcp, run) takes. */
export const agentFlagOptions = {
  edge: { type: 'string' },
  key: { type: 'string' },
  'key-file': { type: 'string' },
  ca: { type: 'string' },
  connections: { type: 'string' },
} as const;

/** agentFlagsHelp documents agentFlagOptions for --help. */
export const agentFlagsHelp = `Edge options (also from the environment):
  --edge ADDR        the edge's tunnel endpoint, [tls://|tcp://]HOST:PORT   ($TUNA_EDGE)
                     tls:// is the default; tcp:// (plaintext) is for loopback demos and tests
  --key KEY          the tunnel key, or an account key with the tunnels scope ($TUNA_KEY)
  --key-file FILE    read the key from a file instead
  --ca FILE          trust this CA (PEM) for the edge's certificate
  --connections N    tunnel connections per binding (default 1)`;

const AgentFlagsCodec = t.partial({
  edge: t.string,
  key: t.string,
  'key-file': t.string,
  ca: t.string,
  connections: PositiveIntString,
});

/** AgentOptions are the validated edge options. */
export interface AgentOptions {
  edge: EdgeEndpoint;
  /** the default key (`--key`, `--key-file`, `$TUNA_KEY`); absent when `--keys` names every binding's */
  key?: string;
  /** keys per hostname or binding id (`tuna run --keys FILE`) */
  keys?: ReadonlyMap<string, string>;
  connections: number;
  /** a UDP flow with no datagram either way for this long is ended (`tuna udp --idle-timeout`; default 60 s) */
  udpIdleTimeoutMs?: number;
}

/**
 * parseEdgeAddress reads `[tls://|tcp://]host:port` (IPv6 in brackets). A wrong address is a
 * usage error here, before anything is dialed.
 */
export function parseEdgeAddress(text: string): EdgeEndpoint {
  const m = /^(?:(tls|tcp):\/\/)?(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(text.trim());
  const port = Number(m?.[3]);
  if (!m || port < 1 || port > 65535)
    throw new UsageError(`--edge ${JSON.stringify(text)} is not an edge address; expected HOST:PORT, tls://HOST:PORT or tcp://HOST:PORT`);
  const host = m[2]!.replace(/^\[|\]$/g, '');
  return { host, port, tls: m[1] !== 'tcp' };
}

/**
 * resolveAgentOptions validates the edge flags, falling back to the environment. With `keys`
 * (per binding) the default key may be absent; a binding without either is refused at apply.
 */
export async function resolveAgentOptions(values: unknown, env: NodeJS.ProcessEnv, command: string): Promise<AgentOptions & { key: string }>;
export async function resolveAgentOptions(values: unknown, env: NodeJS.ProcessEnv, command: string, keys: ReadonlyMap<string, string> | undefined): Promise<AgentOptions>;
export async function resolveAgentOptions(values: unknown, env: NodeJS.ProcessEnv, command: string, keys?: ReadonlyMap<string, string>): Promise<AgentOptions> {
  const flags = decodeFlags(AgentFlagsCodec, values, command);
  const address = flags.edge ?? env.TUNA_EDGE;
  if (address === undefined || address === '') throw new UsageError(`tuna ${command}: no edge given; pass --edge HOST:PORT or set TUNA_EDGE`);
  const edge = parseEdgeAddress(address);
  if (flags.ca !== undefined) {
    if (!edge.tls) throw new UsageError(`tuna ${command}: --ca applies to tls:// edges only`);
    edge.ca = await readText(flags.ca, '--ca');
  }
  let key = flags.key ?? env.TUNA_KEY;
  if (flags['key-file'] !== undefined) key = (await readText(flags['key-file'], '--key-file')).trim();
  const hasKeys = keys !== undefined && keys.size > 0;
  if ((key === undefined || key === '') && !hasKeys) throw new UsageError(`tuna ${command}: no key given; pass --key, --key-file or set TUNA_KEY`);
  return { edge, ...(key === undefined || key === '' ? {} : { key }), ...(hasKeys ? { keys } : {}), connections: flags.connections ?? 1 };
}

async function readText(path: string, flag: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    throw new UsageError(`${flag} ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}
