import type { KeyObject } from 'node:crypto';
import { AcmeBadNonceError, AcmeOrderError, AcmeRequestError, AcmeTimeoutError, AcmeTransportError, AcmeChallengeError } from './errors.js';
import { createHttpsTransport } from './http-transport.js';
import type { AcmeHttpResponse, AcmeTransport } from './http-transport.js';
import { jwkThumbprint, publicJwk, signJws } from './jws.js';
import type { JwsSigner } from './jws.js';
import { AuthorizationCodec, DirectoryCodec, OrderCodec, decodeResource, problemOf, toProblem } from './resources.js';
import type { AcmeAuthorization, AcmeDirectory, AcmeOrderBody } from './resources.js';

/** AcmeClientOptions configure one ACME account at one CA. */
export interface AcmeClientOptions {
  /** the CA's directory URL, e.g. https://acme-v02.api.letsencrypt.org/directory */
  directoryUrl: string;
  /** the account key: ECDSA P-256 (ES256) */
  accountKey: KeyObject;
  /** contact URLs for the account (`mailto:...`) */
  contact?: string[];
  transport?: AcmeTransport;
  /** wait between polls of a pending authorization or order when the server sends no Retry-After */
  pollIntervalMs?: number;
  /** polls before giving up (TUNA_ACME_TIMEOUT) */
  pollAttempts?: number;
  sleep?: (ms: number) => Promise<void>;
}

/** AcmeOrder is an order and its URL. */
export interface AcmeOrder extends AcmeOrderBody {
  url: string;
}

const BAD_NONCE = 'urn:ietf:params:acme:error:badNonce';
// RFC 8555 §6.5: a client retries a badNonce with the fresh nonce of the error answer; bounded.
const NONCE_RETRIES = 3;
const MAX_RETRY_AFTER_MS = 10_000;

/**
 * AcmeClient speaks RFC 8555 for one account: directory, nonces, account, orders, authorizations,
 * challenges, finalize and certificate download. It does not choose challenge types; the issuer does.
 */
export class AcmeClient {
  readonly #options: AcmeClientOptions;
  readonly #transport: AcmeTransport;
  readonly #sleep: (ms: number) => Promise<void>;
  #directory: AcmeDirectory | undefined;
  #nonces: string[] = [];
  #accountUrl: string | undefined;

  constructor(options: AcmeClientOptions) {
    this.#options = options;
    this.#transport = options.transport ?? createHttpsTransport();
    this.#sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    publicJwk(options.accountKey); // fail now on a key that is not P-256
  }

  /** directory fetches (once) the CA's directory (RFC 8555 §7.1.1). */
  async directory(): Promise<AcmeDirectory> {
    if (this.#directory !== undefined) return this.#directory;
    const res = await this.#transport({ method: 'GET', url: this.#options.directoryUrl });
    if (res.status !== 200) throw new AcmeRequestError(this.#options.directoryUrl, toProblem(res.status, res.body));
    this.#directory = decodeResource(DirectoryCodec, parseJson(res, this.#options.directoryUrl), 'directory');
    return this.#directory;
  }

  /** keyAuthorization is `token || '.' || thumbprint(accountKey)` (RFC 8555 §8.1). */
  keyAuthorization(token: string): string {
    return `${token}.${jwkThumbprint(publicJwk(this.#options.accountKey))}`;
  }

  async #nonce(): Promise<string> {
    const cached = this.#nonces.pop();
    if (cached !== undefined) return cached;
    const { newNonce } = await this.directory();
    const res = await this.#transport({ method: 'HEAD', url: newNonce });
    const nonce = res.headers['replay-nonce'];
    if (typeof nonce !== 'string' || nonce === '') throw new AcmeTransportError(`no Replay-Nonce from ${newNonce}`);
    return nonce;
  }

  // Every POST is a signed JWS (RFC 8555 §6.2); payload undefined is POST-as-GET (§6.3).
  async #post(url: string, payload: unknown, signer?: JwsSigner, accept?: string): Promise<AcmeHttpResponse> {
    const identity = signer ?? { kind: 'kid', kid: await this.account() };
    for (let attempt = 0; ; attempt++) {
      const body = JSON.stringify(signJws(this.#options.accountKey, identity, url, await this.#nonce(), payload));
      const headers: Record<string, string> = { 'content-type': 'application/jose+json' };
      if (accept !== undefined) headers.accept = accept;
      const res = await this.#transport({ method: 'POST', url, headers, body });
      const nonce = res.headers['replay-nonce'];
      if (typeof nonce === 'string' && nonce !== '') this.#nonces.push(nonce);
      if (res.status < 400) return res;
      const problem = toProblem(res.status, res.body);
      if (problem.type !== BAD_NONCE) throw new AcmeRequestError(url, problem);
      if (attempt >= NONCE_RETRIES) throw new AcmeBadNonceError(url, problem);
    }
  }

  /** account registers the account key, or finds its existing account (RFC 8555 §7.3); returns the account URL. */
  async account(): Promise<string> {
    if (this.#accountUrl !== undefined) return this.#accountUrl;
    const { newAccount } = await this.directory();
    const payload = { termsOfServiceAgreed: true, ...(this.#options.contact !== undefined ? { contact: this.#options.contact } : {}) };
    const res = await this.#post(newAccount, payload, { kind: 'jwk', jwk: publicJwk(this.#options.accountKey) });
    const location = res.headers.location;
    if (typeof location !== 'string') throw new AcmeTransportError(`no account URL (Location) from ${newAccount}`);
    this.#accountUrl = location;
    return location;
  }

  /** newOrder asks for a certificate for DNS names (RFC 8555 §7.4). */
  async newOrder(hostnames: readonly string[]): Promise<AcmeOrder> {
    const { newOrder } = await this.directory();
    const res = await this.#post(newOrder, { identifiers: hostnames.map((value) => ({ type: 'dns', value })) });
    const url = res.headers.location;
    if (typeof url !== 'string') throw new AcmeOrderError(`no order URL (Location) from ${newOrder}`);
    return { ...decodeResource(OrderCodec, parseJson(res, newOrder), 'order'), url };
  }

  /** authorization reads an authorization (POST-as-GET). */
  async authorization(url: string): Promise<AcmeAuthorization> {
    return decodeResource(AuthorizationCodec, parseJson(await this.#post(url, undefined), url), 'authorization');
  }

  /** acceptChallenge tells the server the challenge response is ready (RFC 8555 §7.5.1: payload `{}`). */
  async acceptChallenge(url: string): Promise<void> {
    await this.#post(url, {});
  }

  /** waitAuthorization polls until the authorization is valid; invalid raises TUNA_ACME_CHALLENGE_FAILED. */
  async waitAuthorization(url: string): Promise<AcmeAuthorization> {
    return this.#poll(`authorization ${url}`, async () => {
      const authz = await this.authorization(url);
      if (authz.status === 'valid') return { done: authz };
      if (authz.status !== 'pending') {
        const failed = authz.challenges.find((c) => c.error !== undefined);
        throw new AcmeChallengeError(authz.identifier.value, problemOf(failed?.error));
      }
      return {};
    });
  }

  /** finalize sends the CSR (DER) and polls the order until the certificate is ready (RFC 8555 §7.4). */
  async finalize(order: AcmeOrder, csrDer: Buffer): Promise<AcmeOrder> {
    await this.#post(order.finalize, { csr: csrDer.toString('base64url') });
    return this.#poll(`order ${order.url}`, async () => {
      const res = await this.#post(order.url, undefined);
      const current: AcmeOrder = { ...decodeResource(OrderCodec, parseJson(res, order.url), 'order'), url: order.url };
      if (current.status === 'valid') return { done: current, retryAfter: res };
      if (current.status === 'invalid') throw new AcmeOrderError(`order ${order.url} is invalid`, problemOf(current.error));
      return { retryAfter: res };
    });
  }

  /** downloadCertificate fetches the PEM chain, leaf first (RFC 8555 §7.4.2). */
  async downloadCertificate(order: AcmeOrder): Promise<string> {
    if (order.certificate === undefined) throw new AcmeOrderError(`order ${order.url} is valid but names no certificate`);
    const res = await this.#post(order.certificate, undefined, undefined, 'application/pem-certificate-chain');
    const pem = res.body.toString('utf8');
    if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new AcmeOrderError(`the certificate at ${order.certificate} is not PEM`);
    return pem;
  }

  async #poll<T>(what: string, step: () => Promise<{ done?: T; retryAfter?: AcmeHttpResponse }>): Promise<T> {
    const attempts = this.#options.pollAttempts ?? 60;
    for (let i = 0; i < attempts; i++) {
      const { done, retryAfter } = await step();
      if (done !== undefined) return done;
      await this.#sleep(retryAfterMs(retryAfter) ?? this.#options.pollIntervalMs ?? 1000);
    }
    throw new AcmeTimeoutError(what);
  }
}

// RFC 8555 §7.4 / RFC 9110 §10.2.3: Retry-After in seconds; capped so a bad value cannot stall us.
function retryAfterMs(res: AcmeHttpResponse | undefined): number | undefined {
  const value = res?.headers['retry-after'];
  if (typeof value !== 'string' || !/^\d+$/.test(value)) return undefined;
  return Math.min(Number(value) * 1000, MAX_RETRY_AFTER_MS);
}

function parseJson(res: AcmeHttpResponse, url: string): unknown {
  try {
    return JSON.parse(res.body.toString('utf8'));
  } catch (err) {
    throw new AcmeTransportError(`the answer from ${url} is not JSON`, { cause: err });
  }
}
