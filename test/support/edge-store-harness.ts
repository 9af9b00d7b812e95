import { expect } from 'chai';
import { request as httpRequest } from 'node:http';
import { startEdge } from '../../src/edge/index.js';
import type { EdgeConfigFile, EdgeServer } from '../../src/edge/index.js';
import { parseToken } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';
import { SystemClock } from '../../src/tunnel/clock.js';
import { NetEdgeDialer } from '../../src/tunnel/dialer.js';
import type { EdgeEndpoint } from '../../src/tunnel/dialer.js';
import { TunnelSession } from '../../src/tunnel/session.js';
import { TestStreamHandler } from './tunnel-handlers.js';

/**
 * Shared pieces of the store-mode edge tests (edge-store-*, security-*, scale-out-*): an edge
 * started from a store, a seeded account with a `reservations` key, and control API calls as real
 * HTTP requests.
 */

/** StoreEdge is a running store-mode edge and everything a test needs to talk to it. */
export interface StoreEdge {
  edge: EdgeServer;
  store: Store;
  /** every line the edge logged */
  logs: string[];
  endpoint: EdgeEndpoint;
  httpPort: number;
  controlPort: number;
}

/** BASE_DOMAIN is the base domain of test edges. */
export const BASE_DOMAIN = 'tuna.test';

/** storeEdgeConfig is a loopback store-mode config. */
export function storeEdgeConfig(url: string, store: Partial<NonNullable<EdgeConfigFile['store']>> = {}): EdgeConfigFile {
  return {
    listen: { tunnel: { host: '127.0.0.1', port: 0 }, http: { host: '127.0.0.1', port: 0 } },
    // The port pool lies below Linux's default ephemeral range (32768-60999): in a loaded full run,
    // other tests' outgoing connections could hold a port of 41000-41999 the edge was about to bind.
    store: { url, baseDomain: BASE_DOMAIN, portPool: { first: 21000, last: 21999 }, addressPool: '127.77.0.0/16', pollMs: 200, ...store },
    limits: { tunnelWaitMs: 2000 },
  };
}

/** startStoreEdge starts a store-mode edge on a store the test opened (not closed by the edge). */
export async function startStoreEdge(store: Store, config: EdgeConfigFile = storeEdgeConfig('unused')): Promise<StoreEdge> {
  const logs: string[] = [];
  const edge = await startEdge(config, { store, log: (line) => logs.push(line) });
  const addr = edge.address();
  return {
    edge,
    store,
    logs,
    endpoint: { host: '127.0.0.1', port: addr.tunnel.port, tls: false },
    httpPort: addr.http?.port ?? 0,
    controlPort: addr.tunnel.port,
  };
}

/** Seeded is an account with a `reservations` API key (the operator's) and an admin key. */
export interface Seeded {
  accountId: string;
  reservationsToken: string;
  adminToken: string;
}

/** seedAccount creates an account with an admin and a reservations key directly in the store. */
export async function seedAccount(store: Store, name = 'acme'): Promise<Seeded> {
  const account = await store.createAccount({ name }, 'test');
  const admin = await store.createApiKey({ accountId: account.id, name: 'admin', scopes: ['admin'] }, 'test');
  const reservations = await store.createApiKey({ accountId: account.id, name: 'operator', scopes: ['reservations'] }, 'test');
  return { accountId: account.id, reservationsToken: reservations.token, adminToken: admin.token };
}

/** ApiAnswer is a parsed control API response. */
export interface ApiAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown>;
}

/** ApiOptions are what an attack changes about a control API request. */
export interface ApiOptions {
  /** the whole Authorization field instead of `Bearer <token>` */
  authorization?: string;
  /** the loopback address to send from (each 127/8 address is its own client to the rate limiter) */
  localAddress?: string;
}

/** api sends one control API request to 127.0.0.1:port. */
export function api(port: number, method: string, path: string, token: string | undefined, body?: unknown, options: ApiOptions = {}): Promise<ApiAnswer> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers: Record<string, string> = {};
    if (token !== undefined) headers['authorization'] = `Bearer ${token}`;
    if (options.authorization !== undefined) headers['authorization'] = options.authorization;
    if (payload !== undefined) headers['content-type'] = 'application/json';
    const from = options.localAddress !== undefined ? { localAddress: options.localAddress } : {};
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers, agent: false, ...from }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parseBody(text) });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}

function parseBody(text: string): Record<string, unknown> {
  try {
    return text.length > 0 ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    return { text };
  }
}

/** Minted is a reservation and a tunnel key for it, made through the control API. */
export interface MintedTunnel {
  reservationId: string;
  bindingId: string;
  keyId: string;
  token: string;
  /** the reservation's address: hostname, port or IP */
  value: string;
}

/** reserveAndMint reserves an address and mints a tunnel key through the control API, failing on any error. */
export async function reserveAndMint(
  port: number,
  token: string,
  reservation: Record<string, unknown>,
  key: { protocol: string; maxConnections?: number; ttlSeconds?: number },
): Promise<MintedTunnel> {
  const reserved = await api(port, 'POST', '/v1/reservations', token, reservation);
  expect(reserved.status, JSON.stringify(reserved.body)).to.be.oneOf([200, 201]);
  const r = reserved.body['reservation'] as { id: string; kind: string; value: string };
  const minted = await api(port, 'POST', '/v1/tunnel-keys', token, { reservationId: r.id, ...key });
  expect(minted.status, JSON.stringify(minted.body)).to.equal(201);
  const segment = r.kind === 'domain' ? 'host' : r.kind;
  return {
    reservationId: r.id,
    bindingId: `binding/${segment}/${r.value}`,
    keyId: (minted.body['tunnelKey'] as { id: string }).id,
    token: minted.body['token'] as string,
    value: r.value,
  };
}

/** connectAgent opens one agent tunnel session; it rejects with TunnelRefusedError when the edge says no. */
export async function connectAgent(endpoint: EdgeEndpoint, bindingId: string, key: string, handler = new TestStreamHandler()): Promise<TunnelSession> {
  const session = new TunnelSession({ edge: endpoint, bindingId, key, dialer: new NetEdgeDialer(), clock: new SystemClock(), handler });
  await session.connect();
  return session;
}

/** refusalStatus returns the HTTP status of a refused handshake, or 101 when it was granted. */
export async function refusalStatus(endpoint: EdgeEndpoint, bindingId: string, key: string): Promise<number> {
  try {
    const session = await connectAgent(endpoint, bindingId, key);
    await session.close();
    return 101;
  } catch (err) {
    const status = (err as { statusCode?: number }).statusCode;
    if (status === undefined) throw err;
    return status;
  }
}

/**
 * secretOf returns the secret part of a key token. The secret is base64url and may itself contain
 * `_`, so it is found by parsing the token's fixed layout, never by its last `_`.
 */
export function secretOf(token: string): string {
  const parsed = parseToken(token.startsWith('tuna_ak_') ? 'api' : 'tunnel', token);
  if (parsed === undefined) throw new Error('not a tuna key token');
  return parsed.secret;
}
