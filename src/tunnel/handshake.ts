import type { Socket } from 'node:net';
import { TunnelProtocolError, TunnelRefusedError, TunnelTimeoutError } from './errors.js';
import { FEATURE_COMPACT_META, HEADER_BINDING, HEADER_CONNECTION_ID, HEADER_FEATURES, SHARED_UPGRADE_TOKEN, TUNNEL_PATH, TUNNEL_UPGRADE_TOKEN } from '../wire/index.js';

/** UpgradeRequest is what the agent asks for in the upgrade (docs/protocol.md §2). */
export interface UpgradeRequest {
  /** Host header: the edge's name */
  host: string;
  /** the binding and its key (protocol version 1); absent for a shared connection, which attaches bindings after the upgrade */
  binding?: { id: string; key: string };
  connectionId: string;
  timeoutMs: number;
  /** optional features the agent supports (`tuna-features`, docs/protocol.md §4.5); none: the header is left out */
  features?: readonly string[];
  /** announce that this agent reads the compact stream context (`tuna-features: compact-meta`); default true */
  compactMeta?: boolean;
}

/** UpgradeResult is what the edge granted: the 101 response headers, lowercased. */
export interface UpgradeResult {
  headers: Record<string, string>;
}

// A response head bigger than this is not from a tuna edge (RFC 9112 §2.3 leaves the limit to us).
const MAX_HEAD_BYTES = 16 << 10;
const MAX_REFUSAL_BODY_BYTES = 4 << 10;

/**
 * upgradeTunnel sends the HTTP/1.1 upgrade request on a fresh socket and waits for the edge's
 * answer. On 101 any bytes after the head (the edge's HTTP/2 preface may arrive in the same
 * segment) are pushed back into the socket for the HTTP/2 server to read.
 *
 * It resolves only once the upgrade request's own write has completed as well. The edge may answer
 * (and send its HTTP/2 SETTINGS) before a TLS socket's write callback has run; the HTTP/2 session
 * started at once would then write its SETTINGS ack while the TLS write is still current, which
 * aborts the process in Node's TLSWrap::DoWrite (seen with ~2,000 tunnels dialed at once).
 */
export function upgradeTunnel(socket: Socket, request: UpgradeRequest): Promise<UpgradeResult> {
  // version 1 names one binding in the upgrade; version 2 (shared) names none (docs/protocol.md §9).
  const token = request.binding === undefined ? SHARED_UPGRADE_TOKEN : TUNNEL_UPGRADE_TOKEN;
  return new Promise<UpgradeResult>((resolve, reject) => {
    let head: Buffer = Buffer.alloc(0);
    let refusal: { status: number; needed: number; body: Buffer } | undefined;
    // the 101 seen while the request's write is still in flight, and whether that write is done
    let granted: UpgradeResult | undefined;
    let written = false;
    let done = false;
    const timer = setTimeout(() => finish(new TunnelTimeoutError('tunnel upgrade', request.timeoutMs)), request.timeoutMs);
    const finish = (err: Error | undefined, result?: UpgradeResult): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('error', onError);
      socket.off('close', onClose);
      if (err !== undefined) {
        socket.destroy();
        reject(err);
      } else resolve(result!);
    };
    const onError = (err: Error): void => finish(err);
    const onClose = (): void => {
      if (refusal !== undefined) return finish(refusalError(refusal.status, refusal.body));
      finish(new TunnelProtocolError('edge closed the connection during the tunnel upgrade'));
    };
    const onData = (chunk: Buffer): void => {
      if (refusal !== undefined) {
        refusal.body = Buffer.concat([refusal.body, chunk]);
        if (refusal.body.length >= refusal.needed) finish(refusalError(refusal.status, refusal.body));
        return;
      }
      head = head.length === 0 ? chunk : Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) {
        if (head.length > MAX_HEAD_BYTES) finish(new TunnelProtocolError('upgrade response head too large'));
        return;
      }
      const parsed = parseHead(head.subarray(0, end).toString('latin1'));
      const rest = head.subarray(end + 4);
      if (parsed === undefined) return finish(new TunnelProtocolError('malformed upgrade response'));
      if (parsed.status === 101) {
        if ((parsed.headers['upgrade'] ?? '').toLowerCase() !== token) {
          return finish(new TunnelProtocolError('edge switched to an unexpected protocol'));
        }
        socket.pause();
        socket.off('data', onData);
        if (rest.length > 0) socket.unshift(rest);
        granted = { headers: parsed.headers };
        if (written) finish(undefined, granted);
        return;
      }
      const length = Math.min(Number(parsed.headers['content-length'] ?? MAX_REFUSAL_BODY_BYTES), MAX_REFUSAL_BODY_BYTES);
      refusal = { status: parsed.status, needed: Number.isFinite(length) ? length : 0, body: rest };
      if (refusal.body.length >= refusal.needed) finish(refusalError(refusal.status, refusal.body));
    };
    socket.on('data', onData);
    socket.on('error', onError);
    socket.on('close', onClose);
    const { binding } = request;
    // the features named: the caller's, and compact-meta unless it is told not to (an older agent)
    const features = [...(request.compactMeta === false ? [] : [FEATURE_COMPACT_META]), ...(request.features ?? [])];
    socket.write(
      `GET ${TUNNEL_PATH} HTTP/1.1\r\n` +
        `Host: ${request.host}\r\n` +
        `Connection: Upgrade\r\n` +
        `Upgrade: ${token}\r\n` +
        (binding === undefined ? '' : `Authorization: Bearer ${binding.key}\r\n${HEADER_BINDING}: ${encodeURIComponent(binding.id)}\r\n`) +
        `${HEADER_CONNECTION_ID}: ${request.connectionId}\r\n` +
        (features.length === 0 ? '' : `${HEADER_FEATURES}: ${features.join(', ')}\r\n`) +
        `\r\n`,
      (err?: Error | null) => {
        written = true;
        if (err) finish(err);
        else if (granted !== undefined) finish(undefined, granted);
      },
    );
  });
}

function refusalError(status: number, body: Buffer): TunnelRefusedError {
  // the edge's body is a short sentence for humans; keep it printable and short.
  const reason = body.subarray(0, 200).toString('utf8').replace(/[^\x20-\x7e]/g, ' ').trim();
  return new TunnelRefusedError(status, reason === '' ? 'no reason given' : reason);
}

function parseHead(text: string): { status: number; headers: Record<string, string> } | undefined {
  const lines = text.split('\r\n');
  const match = /^HTTP\/1\.[01] (\d{3})(?: .*)?$/.exec(lines[0] ?? '');
  if (match === null) return undefined;
  const headers: Record<string, string> = {};
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    const colon = line.indexOf(':');
    if (colon <= 0) return undefined;
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(match[1]), headers };
}
