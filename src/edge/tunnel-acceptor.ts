import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { HEADER_BINDING, HEADER_CONNECTION_ID, TUNNEL_PATH, TUNNEL_UPGRADE_TOKEN } from '../tunnel/protocol.js';
import type { TunnelLimits } from '../tunnel/protocol.js';
import type { TunnelAuthority } from './authority.js';
import type { BindingDirectory } from './directory.js';
import { EdgeTunnel } from './edge-tunnel.js';
import type { EdgeMetrics } from './metrics.js';
import type { TunnelRegistry } from './tunnel-registry.js';

/** TunnelAcceptorOptions are the acceptor's collaborators. */
export interface TunnelAcceptorOptions {
  authority: TunnelAuthority;
  directory: BindingDirectory;
  registry: TunnelRegistry;
  metrics: EdgeMetrics;
  limits: TunnelLimits;
  pingIntervalMs: number;
  log: (line: string) => void;
}

// One body for every credential problem so a refusal tells an attacker nothing about which part
// (key, binding, expiry) was wrong (docs/protocol.md §2.3).
const REFUSALS: Record<number, [string, string]> = {
  400: ['Bad Request', 'tunnel refused: malformed upgrade request\n'],
  401: ['Unauthorized', 'tunnel refused: missing or malformed credentials\n'],
  403: ['Forbidden', 'tunnel refused: the key is not valid for this binding\n'],
  429: ['Too Many Requests', 'tunnel refused: connection limit of this key reached\n'],
};

function refuse(socket: Duplex, status: 400 | 401 | 403 | 429): void {
  const [text, body] = REFUSALS[status]!;
  const challenge = status === 401 ? 'WWW-Authenticate: Bearer realm="tuna"\r\n' : '';
  socket.end(
    `HTTP/1.1 ${status} ${text}\r\n${challenge}Content-Type: text/plain; charset=utf-8\r\n` +
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
  const rawBinding = req.headers[HEADER_BINDING];
  if (req.url !== TUNNEL_PATH || upgrade !== TUNNEL_UPGRADE_TOKEN || typeof rawBinding !== 'string') {
    metrics.countHandshake('malformed');
    return refuse(socket, 400);
  }
  let bindingId: string;
  try {
    bindingId = decodeURIComponent(rawBinding);
  } catch {
    metrics.countHandshake('malformed');
    return refuse(socket, 400);
  }
  const match = /^Bearer ([\x21-\x7e]+)$/.exec(req.headers.authorization ?? '');
  if (match === null) {
    metrics.countHandshake('malformed');
    return refuse(socket, 401);
  }
  const connectionId = String(req.headers[HEADER_CONNECTION_ID] ?? '').slice(0, 64);
  const remoteAddress = req.socket.remoteAddress ?? '';
  const verdict = await options.authority.authorize(match[1]!, { bindingId, remoteAddress, connectionId });
  if (socket.destroyed) return;
  if (!verdict.ok || options.directory.byId(bindingId) === undefined) {
    const reason = verdict.ok ? 'unknown-binding' : verdict.reason;
    metrics.countHandshake(reason);
    options.log(`tunnel refused from ${remoteAddress}: ${reason}`);
    return refuse(socket, verdict.ok ? 403 : verdict.status);
  }
  if (verdict.maxConnections !== undefined && options.registry.countForKey(verdict.keyId) >= verdict.maxConnections) {
    metrics.countHandshake('connection-limit');
    return refuse(socket, 429);
  }
  metrics.countHandshake('granted');
  const tcp = socket as Socket;
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
      `HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: ${TUNNEL_UPGRADE_TOKEN}\r\n` +
        `${HEADER_BINDING}: ${encodeURIComponent(bindingId)}\r\n\r\n`,
      (err) => resolve(err === undefined || err === null),
    );
  });
  if (!written || tcp.destroyed) return void tcp.destroy();
  const tunnel = new EdgeTunnel({
    socket: tcp,
    bindingId,
    keyId: verdict.keyId,
    connectionId,
    limits: options.limits,
    pingIntervalMs: options.pingIntervalMs,
  });
  if (await tunnel.ready()) {
    options.registry.add(tunnel);
    options.log(`tunnel ${connectionId} up for ${bindingId} (key ${verdict.keyId}) from ${remoteAddress}`);
    tunnel.onClose(() => options.log(`tunnel ${connectionId} down for ${bindingId}`));
  } else tunnel.destroy();
}

function noop(): void {}
