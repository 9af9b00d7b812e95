import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import {
  FEATURE_COMPACT_META,
  HEADER_BINDING,
  HEADER_CONNECTION_ID,
  HEADER_EDGE_WORKER,
  HEADER_FEATURES,
  SHARED_UPGRADE_TOKEN,
  TUNNEL_PATH,
  TUNNEL_UPGRADE_TOKEN,
  formatEdgeWorker,
  featureTokens,
} from '../../wire/index.js';
import type { EdgeWorker, TunnelLimits } from '../../wire/index.js';
import type { Grant, TunnelAuthority } from './authority.js';
import type { BindingDirectory } from './directory.js';
import { EdgeConnection } from './edge-connection.js';
import { EdgeTunnel } from './edge-tunnel.js';
import { SharedTunnel } from './shared-tunnel.js';
import type { EdgeMetrics } from '../metrics/index.js';
import type { TunnelRegistry } from './tunnel-registry.js';

/**
 * HandshakeLimiter is what the acceptor asks of the failed-handshake limiter (FailureRateLimiter,
 * src/edge/control/rate-limiter.ts, which the control API spends on failed API keys too).
 */
export interface HandshakeLimiter {
  /** seconds until the address may try again (0: now) */
  retryAfter(address: string): number;
  recordFailure(address: string): void;
}

/** TunnelAcceptorOptions are the acceptor's collaborators. */
export interface TunnelAcceptorOptions {
  authority: TunnelAuthority;
  directory: BindingDirectory;
  registry: TunnelRegistry;
  metrics: EdgeMetrics;
  limits: TunnelLimits;
  pingIntervalMs: number;
  log: (line: string) => void;
  /** failed handshakes per client address; an empty bucket refuses every attempt with 429 */
  limiter?: HandshakeLimiter;
  /** called with the grant of each registered tunnel (store mode tracks expiry and revocation) */
  onGranted?: (grant: Grant) => void;
  /** this process is one of several workers of the edge node: named in every 101 (docs/protocol.md §9.8) */
  worker?: EdgeWorker;
}

// The worker header of the 101, or nothing for an edge of one process.
function workerHeader(options: TunnelAcceptorOptions): string {
  return options.worker === undefined ? '' : `${HEADER_EDGE_WORKER}: ${formatEdgeWorker(options.worker)}\r\n`;
}

// One body for every credential problem so a refusal tells an attacker nothing about which part
// (key, binding, expiry) was wrong (docs/protocol.md §2.3).
const REFUSALS = {
  'malformed': [400, 'Bad Request', 'tunnel refused: malformed upgrade request\n'],
  'credentials': [401, 'Unauthorized', 'tunnel refused: missing or malformed credentials\n'],
  'forbidden': [403, 'Forbidden', 'tunnel refused: the key is not valid for this binding\n'],
  'connection-limit': [429, 'Too Many Requests', 'tunnel refused: connection limit of this key reached\n'],
  'rate-limited': [429, 'Too Many Requests', 'tunnel refused: too many failed attempts, retry later\n'],
} as const;

type RefusalKind = keyof typeof REFUSALS;

function refuse(socket: Duplex, kind: RefusalKind, retryAfter = 0): void {
  const [status, text, body] = REFUSALS[kind];
  const extra = (status === 401 ? 'WWW-Authenticate: Bearer realm="tuna"\r\n' : '') + (retryAfter > 0 ? `Retry-After: ${retryAfter}\r\n` : '');
  socket.end(
    `HTTP/1.1 ${status} ${text}\r\n${extra}Content-Type: text/plain; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/**
 * acceptTunnel handles one upgrade request on the tunnel listener: authenticate, answer 101, and
 * become the HTTP/2 client on the socket (role reversal, docs/protocol.md §3). The key is never
 * logged; only the key id of a grant is.
 */
export async function acceptTunnel(options: TunnelAcceptorOptions, req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
  socket.on('error', noop);
  const { metrics } = options;
  const upgrade = (req.headers.upgrade ?? '').toLowerCase();
  if (upgrade === SHARED_UPGRADE_TOKEN) return acceptSharedTunnel(options, req, socket, head);
  const rawBinding = req.headers[HEADER_BINDING];
  if (req.url !== TUNNEL_PATH || upgrade !== TUNNEL_UPGRADE_TOKEN || typeof rawBinding !== 'string') {
    metrics.countHandshake('malformed');
    return refuse(socket, 'malformed');
  }
  let bindingId: string;
  try {
    bindingId = decodeURIComponent(rawBinding);
  } catch {
    metrics.countHandshake('malformed');
    return refuse(socket, 'malformed');
  }
  const match = /^Bearer ([\x21-\x7e]+)$/.exec(req.headers.authorization ?? '');
  if (match === null) {
    metrics.countHandshake('malformed');
    return refuse(socket, 'credentials');
  }
  const connectionId = String(req.headers[HEADER_CONNECTION_ID] ?? '').slice(0, 64);
  const features = featureTokens(req.headers[HEADER_FEATURES]);
  const readsCompactMeta = features.has(FEATURE_COMPACT_META);
  const remoteAddress = req.socket.remoteAddress ?? '';
  // Brute force of tunnel keys: refused before the key is looked at, so a right guess looks like a wrong one.
  const retryAfter = options.limiter?.retryAfter(remoteAddress) ?? 0;
  if (retryAfter > 0) {
    metrics.countHandshake('rate-limited');
    return refuse(socket, 'rate-limited', retryAfter);
  }
  const verdict = await options.authority.authorize(match[1]!, { bindingId, remoteAddress, connectionId });
  if (socket.destroyed) return;
  if (!verdict.ok || options.directory.byId(bindingId) === undefined) {
    const reason = verdict.ok ? 'unknown-binding' : verdict.reason;
    metrics.countHandshake(reason);
    options.limiter?.recordFailure(remoteAddress);
    options.log(`tunnel refused from ${remoteAddress}: ${reason}`);
    return refuse(socket, !verdict.ok && verdict.status === 401 ? 'credentials' : 'forbidden');
  }
  const release = verdict.maxConnections === undefined ? noop : options.registry.claim(verdict.capId ?? verdict.keyId, verdict.maxConnections);
  if (release === undefined) {
    metrics.countHandshake('connection-limit');
    return refuse(socket, 'connection-limit');
  }
  let tunnel: EdgeTunnel | undefined;
  try {
    tunnel = await upgradeGranted(options, verdict, tcpOf(socket), head, { connectionId, readsCompactMeta }, remoteAddress, features);
  } finally {
    // A shared cap (capId) counts no live tunnel by key: its slot is held until the tunnel closes.
    if (tunnel !== undefined && verdict.capId !== undefined) tunnel.onClose(release);
    else release();
  }
}

function tcpOf(socket: Duplex): Socket {
  return socket as Socket;
}

async function upgradeGranted(
  options: TunnelAcceptorOptions,
  verdict: Grant,
  tcp: Socket,
  head: Buffer,
  upgrade: { connectionId: string; readsCompactMeta: boolean },
  remoteAddress: string,
  features: ReadonlySet<string>,
): Promise<EdgeTunnel | undefined> {
  const { connectionId } = upgrade;
  const { bindingId } = verdict;
  options.metrics.countHandshake('granted');
  const switched = await switchProtocols(tcp, head, TUNNEL_UPGRADE_TOKEN, `${HEADER_BINDING}: ${encodeURIComponent(bindingId)}\r\n${workerHeader(options)}`);
  if (!switched) return undefined;
  const tunnel = new EdgeTunnel({
    socket: tcp,
    bindingId,
    keyId: verdict.keyId,
    connectionId,
    readsCompactMeta: upgrade.readsCompactMeta,
    limits: options.limits,
    pingIntervalMs: options.pingIntervalMs,
    features,
  });
  if (await tunnel.ready()) {
    options.registry.add(tunnel);
    options.onGranted?.(verdict);
    options.log(`tunnel ${connectionId} up for ${bindingId} (key ${verdict.keyId}) from ${remoteAddress}`);
    tunnel.onClose(() => options.log(`tunnel ${connectionId} down for ${bindingId}`));
    return tunnel;
  }
  tunnel.destroy();
  return undefined;
}

/**
 * switchProtocols answers 101 on an upgraded socket and resolves true once the head is out (false,
 * with the socket destroyed, when it could not be written): from then on the socket is HTTP/2's.
 */
async function switchProtocols(tcp: Socket, head: Buffer, token: string, extraHeaders: string): Promise<boolean> {
  // HTTP servers accept half-open sockets; a tunnel is not one: when the agent's FIN arrives
  // after a graceful HTTP/2 close, the socket must end and close, or the session never reports
  // 'close' (Node waits for the socket to close after GOAWAY).
  tcp.allowHalfOpen = false;
  tcp.setNoDelay?.(true);
  tcp.setKeepAlive?.(true, 30_000);
  // Hold the agent's first HTTP/2 bytes in the socket buffer: the session replays them.
  tcp.pause();
  if (head.length > 0) tcp.unshift(head);
  // The HTTP/2 session takes over the socket's native handle; a JS write still in flight on a
  // TLS socket at that moment trips a native assertion, so the session starts once the 101 is out.
  const written = await new Promise<boolean>((resolve) => {
    tcp.write(
      `HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: ${token}\r\n${extraHeaders}\r\n`,
      (err) => resolve(err === undefined || err === null),
    );
  });
  if (!written || tcp.destroyed) {
    tcp.destroy();
    return false;
  }
  return true;
}

/**
 * acceptSharedTunnel handles a version 2 upgrade (docs/protocol.md §9): no key and no binding yet;
 * after 101 the connection's control stream attaches bindings one by one, each with its own key
 * (SharedTunnel). Failed-attempt rate limiting applies before the upgrade as for version 1.
 */
async function acceptSharedTunnel(options: TunnelAcceptorOptions, req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
  const { metrics } = options;
  if (req.url !== TUNNEL_PATH) {
    metrics.countHandshake('malformed');
    return refuse(socket, 'malformed');
  }
  const connectionId = String(req.headers[HEADER_CONNECTION_ID] ?? '').slice(0, 64);
  const remoteAddress = req.socket.remoteAddress ?? '';
  const retryAfter = options.limiter?.retryAfter(remoteAddress) ?? 0;
  if (retryAfter > 0) {
    metrics.countHandshake('rate-limited');
    return refuse(socket, 'rate-limited', retryAfter);
  }
  const tcp = tcpOf(socket);
  if (!(await switchProtocols(tcp, head, SHARED_UPGRADE_TOKEN, workerHeader(options)))) return;
  const features = featureTokens(req.headers[HEADER_FEATURES]);
  const readsCompactMeta = features.has(FEATURE_COMPACT_META);
  const connection = new EdgeConnection({ socket: tcp, connectionId, readsCompactMeta, limits: options.limits, pingIntervalMs: options.pingIntervalMs, features });
  const shared = new SharedTunnel(options, connection, remoteAddress);
  if (!(await shared.start())) return;
  options.registry.addShared(connection);
  options.log(`shared tunnel connection ${connectionId} up from ${remoteAddress}`);
  connection.onClose(() => options.log(`shared tunnel connection ${connectionId} down`));
}

function noop(): void {}
