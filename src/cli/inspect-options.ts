import * as t from 'io-ts';
import { Inspector, InspectorListenError } from '../inspector/index.js';
import type { InspectorOptions } from '../inspector/index.js';
import { decodeFlags } from './flags.js';
import type { Logger } from './log.js';

/** inspectFlagOptions are the request inspector's flags (tuna http, tuna run). */
export const inspectFlagOptions = {
  inspect: { type: 'string' },
  'inspect-body-limit': { type: 'string' },
  'inspect-max-requests': { type: 'string' },
  'inspect-show-secrets': { type: 'boolean' },
} as const;

/** defaultInspectAddress is where the inspector listens unless told otherwise (Tuna's agent and ngrok use 4040). */
export const defaultInspectAddress = { host: '127.0.0.1', port: 4040 };
const defaultBodyLimit = 65_536;
const defaultMaxRequests = 250;

/** inspectFlagsHelp documents inspectFlagOptions for --help. */
export const inspectFlagsHelp = `Request inspector (a page listing the requests served, with replay; on by default):
  --inspect ADDR     where the page listens, on loopback: HOST:PORT or PORT
                     (default 127.0.0.1:4040, $TUNA_INSPECT); --inspect=false switches it off
  --inspect-body-limit BYTES  bytes kept of each request and response body (default ${defaultBodyLimit})
  --inspect-max-requests N    requests kept, the oldest dropped first (default ${defaultMaxRequests})
  --inspect-show-secrets      show Authorization, Cookie and Set-Cookie values (default [redacted])`;

/** InspectAddress is the decoded --inspect: off, or an address. */
export type InspectAddress = { kind: 'off' } | { kind: 'on'; host: string; port: number };

/**
 * InspectAddressString decodes --inspect: `false`/`off` (off), `true`/`on` (the default address),
 * `PORT` (on 127.0.0.1) or `HOST:PORT` with a loopback HOST. The page shows captured requests and
 * replays them: it is never offered to the network.
 */
export const InspectAddressString = new t.Type<InspectAddress, string, unknown>(
  'inspect-address',
  (u): u is InspectAddress => typeof u === 'object' && u !== null && 'kind' in u,
  (u, c) => {
    if (typeof u !== 'string') return t.failure(u, c, 'must be false, true, PORT or HOST:PORT');
    const text = u.trim().toLowerCase();
    if (text === 'false' || text === 'off' || text === 'no') return t.success({ kind: 'off' });
    if (text === 'true' || text === 'on' || text === 'yes' || text === '') return t.success({ kind: 'on', ...defaultInspectAddress });
    const m = /^(?:(\[[0-9a-f:.]+\]|[a-z0-9.-]+):)?(\d{1,5})$/.exec(text);
    if (!m || Number(m[2]) > 65535) return t.failure(u, c, 'must be false, true, PORT or HOST:PORT (loopback)');
    const host = (m[1] ?? defaultInspectAddress.host).replace(/^\[|\]$/g, '');
    if (!isLoopbackName(host)) return t.failure(u, c, 'must be a loopback address (127.0.0.1, [::1] or localhost): the inspector shows captured requests and replays them');
    return t.success({ kind: 'on', host, port: Number(m[2]) });
  },
  (a) => (a.kind === 'off' ? 'false' : `${a.host}:${a.port}`),
);

function isLoopbackName(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** BoundedIntString decodes a whole number within [min, max]. */
function boundedIntString(name: string, min: number, max: number): t.Type<number, string, unknown> {
  return new t.Type<number, string, unknown>(
    name,
    (u): u is number => typeof u === 'number',
    (u, c) => (typeof u === 'string' && /^\d{1,9}$/.test(u) && Number(u) >= min && Number(u) <= max ? t.success(Number(u)) : t.failure(u, c, `must be a whole number from ${min} to ${max}`)),
    String,
  );
}

const InspectFlags = t.partial({
  inspect: InspectAddressString,
  'inspect-body-limit': boundedIntString('bytes', 0, 16 * 1024 * 1024),
  'inspect-max-requests': boundedIntString('count', 1, 100_000),
  'inspect-show-secrets': t.boolean,
});

/** resolveInspectOptions validates the inspector flags ($TUNA_INSPECT when --inspect is absent); undefined means off. */
export function resolveInspectOptions(values: Record<string, unknown>, env: NodeJS.ProcessEnv, command: string): InspectorOptions | undefined {
  const withEnv = values.inspect === undefined && env.TUNA_INSPECT !== undefined && env.TUNA_INSPECT !== '' ? { ...values, inspect: env.TUNA_INSPECT } : values;
  const flags = decodeFlags(InspectFlags, withEnv, command);
  const address = flags.inspect ?? { kind: 'on', ...defaultInspectAddress };
  if (address.kind === 'off') return undefined;
  return {
    host: address.host,
    port: address.port,
    bodyLimit: flags['inspect-body-limit'] ?? defaultBodyLimit,
    maxRequests: flags['inspect-max-requests'] ?? defaultMaxRequests,
    showSecrets: flags['inspect-show-secrets'] === true,
  };
}

/**
 * startInspector opens the inspector, or says in one warning why it cannot (the port is taken)
 * and returns undefined: publishing goes on without it, and the data plane gets no observer.
 */
export async function startInspector(options: InspectorOptions | undefined, log: Logger, command: string): Promise<Inspector | undefined> {
  if (options === undefined) return undefined;
  const inspector = new Inspector(options);
  try {
    await inspector.listen();
    return inspector;
  } catch (err) {
    if (!(err instanceof InspectorListenError)) throw err;
    log.warn(`tuna ${command}: warning: ${err.message}; publishing without it (--inspect HOST:PORT moves it, --inspect=false switches it off)`, { code: err.code, address: err.address });
    return undefined;
  }
}

/** inspectorBanner is the banner line naming the page, if the inspector runs. */
export function inspectorBanner(inspector: Inspector | undefined): string[] {
  if (inspector === undefined) return [];
  const secrets = inspector.options.showSecrets ? ' (showing secrets)' : '';
  return [`Inspector: ${inspector.url()}${secrets}`];
}
