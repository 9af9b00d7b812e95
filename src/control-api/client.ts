import http from 'node:http';
import https from 'node:https';
import { isLeft } from 'fp-ts/lib/Either.js';
import type * as t from 'io-ts';
import {
  AccountAnswer,
  AccountsAnswer,
  ApiKeyAnswer,
  ApiKeysAnswer,
  AuditAnswer,
  CreatedReservationAnswer,
  DisabledAccountAnswer,
  EdgeAnswer,
  ErrorAnswer,
  MintedApiKeyAnswer,
  MintedTunnelKeyAnswer,
  ReleasedAnswer,
  ReservationAnswer,
  ReservationsAnswer,
  TunnelKeyAnswer,
  TunnelKeysAnswer,
} from './answers.js';
import { ControlBadAnswerError, ControlUnreachableError, errorFromAnswer } from './errors.js';
import { selectorQuery, toQuery } from './query.js';
import type { AuditQuery } from './query.js';
import type { ApiKeyScope, LabelSelector, PortSpec } from './records.js';
import type { CreateApiKeyRequest, ReservationRequest, TunnelKeyRequest } from './requests.js';

/**
 * ControlClient is the typed client of the edge's control API (`/v1` on the edge's tunnel
 * listener; docs/edge.md "Control API"), used by the CLI and the operator. Every answer is checked
 * with its io-ts codec; an error answer becomes the control API's own error class
 * (errorFromAnswer), a missing or foreign answer a ControlUnreachableError. The API key goes in
 * the Authorization header only: it is never part of a URL, an error message or a log line.
 */

/** ControlEndpoint is where the control API listens and what to trust. */
export interface ControlEndpoint {
  /** the edge's base URL, `http://` or `https://`, without a path */
  readonly url: URL;
  /** a CA (PEM) to trust for an https:// edge with a self-signed certificate */
  readonly ca?: string;
}

const TIMEOUT_MS = 30_000;

interface RawAnswer {
  status: number;
  text: string;
  retryAfter: string | undefined;
  allow: string | undefined;
}

/** ControlClient talks to one edge with one API key. */
export class ControlClient {
  readonly #endpoint: ControlEndpoint;
  readonly #apiKey: string;
  /**
   * one keep-alive pool per client: a connection (and for https one TLS context and handshake) is
   * reused by the calls after it. A connection per call made each of the operator's thousands of
   * reservations and keys pay a new TLS context and handshake on both sides. Idle
   * connections do not keep a process alive (the agent unrefs them).
   */
  readonly #agent: http.Agent;

  constructor(endpoint: ControlEndpoint, apiKey: string) {
    this.#endpoint = endpoint;
    this.#apiKey = apiKey;
    const pool = { keepAlive: true, maxFreeSockets: 16 };
    this.#agent = endpoint.url.protocol === 'https:' ? new https.Agent({ ...pool, ...(endpoint.ca !== undefined ? { ca: endpoint.ca } : {}) }) : new http.Agent(pool);
  }

  /** close ends the pool's idle connections (calls in flight finish). */
  close(): void {
    this.#agent.destroy();
  }

  /** describeEdge asks what the edge serves: base domain, pools, public listeners, version (any valid key). */
  describeEdge() {
    return this.#call('GET', '/v1/edge', EdgeAnswer, undefined);
  }

  /** createAccount creates a tenant account (admin scope). */
  createAccount(name: string) {
    return this.#call('POST', '/v1/accounts', AccountAnswer, 'admin', { name });
  }

  /** listAccounts lists every account, disabled ones included (admin scope). */
  listAccounts() {
    return this.#call('GET', '/v1/accounts', AccountsAnswer, 'admin');
  }

  /** disableAccount disables an account and revokes its keys (admin scope); its reservations stay held. */
  disableAccount(id: string) {
    return this.#call('POST', `/v1/accounts/${encodeURIComponent(id)}/disable`, DisabledAccountAnswer, 'admin', {});
  }

  /** createApiKey mints an account API key (admin scope); the token is in the answer once. */
  createApiKey(body: CreateApiKeyRequest) {
    return this.#call('POST', '/v1/api-keys', MintedApiKeyAnswer, 'admin', body);
  }

  /** listApiKeys lists the live API keys of the caller's account, or of `accountId` (admin). */
  listApiKeys(accountId?: string) {
    return this.#call('GET', `/v1/api-keys${toQuery({ accountId })}`, ApiKeysAnswer, 'admin');
  }

  /** revokeApiKey revokes an API key (admin scope). */
  revokeApiKey(id: string, accountId?: string) {
    return this.#call('DELETE', `/v1/api-keys/${encodeURIComponent(id)}${toQuery({ accountId })}`, ApiKeyAnswer, 'admin');
  }

  /** listAuditEvents reads the audit log of the caller's account, or of `accountId` (admin scope). */
  listAuditEvents(query: AuditQuery = {}) {
    return this.#call('GET', `/v1/audit${toQuery({ ...query })}`, AuditAnswer, 'admin');
  }

  /** mintTunnelKey mints a tunnel key for one reservation and protocol; the token is in the answer once. */
  mintTunnelKey(body: TunnelKeyRequest) {
    return this.#call('POST', '/v1/tunnel-keys', MintedTunnelKeyAnswer, 'reservations', body);
  }

  /** listTunnelKeys lists live tunnel keys, filtered by labels (every pair must match). */
  listTunnelKeys(labels?: LabelSelector) {
    return this.#call('GET', `/v1/tunnel-keys${selectorQuery(labels)}`, TunnelKeysAnswer, 'reservations');
  }

  /** revokeTunnelKey revokes a tunnel key; the edge closes its live connections. */
  revokeTunnelKey(id: string) {
    return this.#call('DELETE', `/v1/tunnel-keys/${encodeURIComponent(id)}`, TunnelKeyAnswer, 'reservations');
  }

  /** reserve creates a reservation, or adopts one the account already holds (`created: false`). */
  reserve(body: ReservationRequest) {
    return this.#call('POST', '/v1/reservations', CreatedReservationAnswer, 'reservations', body);
  }

  /** listReservations lists held reservations, filtered by labels. */
  listReservations(labels?: LabelSelector) {
    return this.#call('GET', `/v1/reservations${selectorQuery(labels)}`, ReservationsAnswer, 'reservations');
  }

  /** verifyDomain asks the edge to look for a custom domain's DNS TXT record (409 while it is missing). */
  verifyDomain(id: string) {
    return this.#call('POST', `/v1/reservations/${encodeURIComponent(id)}/verify`, ReservationAnswer, 'reservations', {});
  }

  /**
   * setReservationPorts sets the ports an address reservation's address serves (every one: the
   * edge opens the new ones and closes the removed ones, the others and the tunnels stay).
   */
  setReservationPorts(id: string, ports: readonly PortSpec[]) {
    return this.#call('PUT', `/v1/reservations/${encodeURIComponent(id)}/ports`, ReservationAnswer, 'reservations', { ports });
  }

  /** release releases a reservation; the tunnel keys bound to it are revoked with it. */
  release(id: string) {
    return this.#call('DELETE', `/v1/reservations/${encodeURIComponent(id)}`, ReleasedAnswer, 'reservations');
  }

  async #call<A>(method: string, path: string, codec: t.Decoder<unknown, A>, scope: ApiKeyScope | undefined, body?: unknown): Promise<A> {
    const answer = await this.#send(method, path, body);
    let json: unknown;
    try {
      json = JSON.parse(answer.text);
    } catch {
      throw new ControlUnreachableError(`${this.#endpoint.url.origin} answered ${answer.status} without JSON; it is not a tuna control API`);
    }
    if (answer.status >= 400) {
      const error = ErrorAnswer.decode(json);
      throw errorFromAnswer(answer.status, isLeft(error) ? {} : error.right.error, answer, scope);
    }
    const decoded = codec.decode(json);
    if (isLeft(decoded)) throw new ControlBadAnswerError(`the edge's answer to ${method} ${path.split('?')[0] ?? path} has an unexpected shape`);
    return decoded.right;
  }

  async #send(method: string, path: string, body: unknown): Promise<RawAnswer> {
    try {
      return await this.#sendOnce(method, path, body);
    } catch (err) {
      // the edge closed an idle pooled connection as this call took it: the request never reached
      // the edge (a server closes only idle connections), so it is sent once more on a new one
      if (!(err instanceof ControlUnreachableError && isStaleConnection(err))) throw err;
      return this.#sendOnce(method, path, body);
    }
  }

  #sendOnce(method: string, path: string, body: unknown): Promise<RawAnswer> {
    const { url } = this.#endpoint;
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers: http.OutgoingHttpHeaders = { authorization: `Bearer ${this.#apiKey}`, accept: 'application/json' };
    if (payload) Object.assign(headers, { 'content-type': 'application/json', 'content-length': payload.length });
    const target = new URL(path, url);
    const options: https.RequestOptions = { method, headers, agent: this.#agent, timeout: TIMEOUT_MS };
    return new Promise((resolve, reject) => {
      const req = (target.protocol === 'https:' ? https : http).request(target, options, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            text: Buffer.concat(chunks).toString('utf8'),
            retryAfter: header(res.headers['retry-after']),
            allow: header(res.headers['allow']),
          }),
        );
        res.on('error', (err) => reject(unreachable(url, err)));
      });
      req.on('timeout', () => req.destroy(Object.assign(new Error(`no answer within ${TIMEOUT_MS / 1000} s`), { code: 'ETIMEDOUT' })));
      req.on('error', (err) => reject(unreachable(url, err, req.reusedSocket)));
      req.end(payload);
    });
  }
}

/** a pooled connection that was reused and reset or closed before any answer: the edge had closed it as idle */
const STALE_CODES: ReadonlySet<string> = new Set(['ECONNRESET', 'EPIPE']);
const staleErrors = new WeakSet<ControlUnreachableError>();

function isStaleConnection(err: ControlUnreachableError): boolean {
  return staleErrors.has(err);
}

function unreachable(url: URL, err: Error, reusedSocket = false): ControlUnreachableError {
  // The error's code (ECONNREFUSED, ENOTFOUND, CERT_…) says enough; the request itself (and its
  // Authorization header) is never part of the message.
  const code = (err as NodeJS.ErrnoException).code;
  const wrapped = new ControlUnreachableError(`cannot reach ${url.origin}: ${code ?? err.message}`, { cause: err });
  if (reusedSocket && code !== undefined && STALE_CODES.has(code)) staleErrors.add(wrapped);
  return wrapped;
}

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
