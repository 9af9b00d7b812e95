import { expect } from 'chai';
import { createHash, createPublicKey, generateKeyPairSync, verify } from 'node:crypto';
import type { JsonWebKey } from 'node:crypto';
import { AcmeClient } from '../../src/edge/acme/index.js';
import type { AcmeHttpRequest, AcmeHttpResponse, AcmeError } from '../../src/edge/acme/index.js';

const BASE = 'https://ca.test';

interface Seen {
  url: string;
  header: { alg: string; nonce: string; url: string; jwk?: JsonWebKey; kid?: string };
  payload: string;
}

/**
 * FakeCa is a table-driven ACME server: it hands out numbered nonces, checks each JWS signature
 * and nonce, and answers POSTs from `routes` (url → answers, consumed in order).
 */
class FakeCa {
  nonce = 0;
  seen: Seen[] = [];
  issued = new Set<string>();
  routes = new Map<string, AcmeHttpResponse[]>();

  answer(url: string, ...answers: AcmeHttpResponse[]): void {
    this.routes.set(url, [...(this.routes.get(url) ?? []), ...answers]);
  }

  fresh(): string {
    const n = `n${++this.nonce}`;
    this.issued.add(n);
    return n;
  }

  transport = async (req: AcmeHttpRequest): Promise<AcmeHttpResponse> => {
    if (req.url === `${BASE}/dir`) return json(200, { newNonce: `${BASE}/nonce`, newAccount: `${BASE}/account`, newOrder: `${BASE}/order` });
    if (req.method === 'HEAD') return { status: 200, headers: { 'replay-nonce': this.fresh() }, body: Buffer.alloc(0) };
    const jws = JSON.parse(req.body!) as { protected: string; payload: string; signature: string };
    const header = JSON.parse(Buffer.from(jws.protected, 'base64url').toString()) as Seen['header'];
    expect(header.alg).to.equal('ES256');
    expect(header.url).to.equal(req.url);
    expect(this.issued.delete(header.nonce), `nonce ${header.nonce} reused or unknown`).to.equal(true);
    this.seen.push({ url: req.url, header, payload: Buffer.from(jws.payload, 'base64url').toString() });
    const next = this.routes.get(req.url)?.shift();
    if (next === undefined) throw new Error(`no answer for ${req.url}`);
    return { ...next, headers: { ...next.headers, 'replay-nonce': this.fresh() } };
  };
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): AcmeHttpResponse {
  return { status, headers: { 'content-type': 'application/json', ...headers }, body: Buffer.from(JSON.stringify(body)) };
}

function problem(type: string, detail: string, status = 400): AcmeHttpResponse {
  return { status, headers: { 'content-type': 'application/problem+json' }, body: Buffer.from(JSON.stringify({ type, detail, status })) };
}

const ACCOUNT_CREATED = json(201, { status: 'valid' }, { location: `${BASE}/acct/1` });

describe('acme client', () => {
  let ca: FakeCa;
  let client: AcmeClient;
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });

  beforeEach(() => {
    ca = new FakeCa();
    client = new AcmeClient({ directoryUrl: `${BASE}/dir`, accountKey: privateKey, transport: ca.transport, sleep: () => Promise.resolve(), pollAttempts: 3 });
  });

  it('signs newAccount with the jwk and later requests with the account URL as kid', async () => {
    ca.answer(`${BASE}/account`, ACCOUNT_CREATED);
    ca.answer(`${BASE}/order`, json(201, { status: 'pending', authorizations: [], finalize: `${BASE}/fin` }, { location: `${BASE}/o/1` }));
    const order = await client.newOrder(['app.test']);
    expect(order.url).to.equal(`${BASE}/o/1`);
    const [account, newOrder] = ca.seen;
    expect(account!.header.jwk).to.deep.equal({ ...publicKey.export({ format: 'jwk' }) });
    expect(account!.header.kid).to.equal(undefined);
    expect(newOrder!.header.kid).to.equal(`${BASE}/acct/1`);
    expect(newOrder!.header.jwk).to.equal(undefined);
    expect(JSON.parse(newOrder!.payload)).to.deep.equal({ identifiers: [{ type: 'dns', value: 'app.test' }] });
  });

  it('produces signatures that verify with the account public key (ES256, r||s)', async () => {
    let body = '';
    const capture = async (req: AcmeHttpRequest): Promise<AcmeHttpResponse> => {
      if (req.method === 'POST') body = req.body!;
      return ca.transport(req);
    };
    ca.answer(`${BASE}/account`, ACCOUNT_CREATED);
    await new AcmeClient({ directoryUrl: `${BASE}/dir`, accountKey: privateKey, transport: capture }).account();
    const jws = JSON.parse(body) as { protected: string; payload: string; signature: string };
    const key = createPublicKey({ key: ca.seen[0]!.header.jwk!, format: 'jwk' });
    const signed = Buffer.from(`${jws.protected}.${jws.payload}`);
    expect(verify('sha256', signed, { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(jws.signature, 'base64url'))).to.equal(true);
    expect(verify('sha256', Buffer.from(`${jws.protected}.x`), { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(jws.signature, 'base64url'))).to.equal(false);
  });

  it('retries a badNonce with the nonce of the error answer', async () => {
    ca.answer(`${BASE}/account`, problem('urn:ietf:params:acme:error:badNonce', 'stale'), ACCOUNT_CREATED);
    expect(await client.account()).to.equal(`${BASE}/acct/1`);
    expect(ca.seen).to.have.length(2);
    expect(ca.seen[1]!.header.nonce).to.equal('n2'); // the nonce the badNonce answer carried
  });

  it('gives up with TUNA_ACME_BAD_NONCE after three retries', async () => {
    const bad = problem('urn:ietf:params:acme:error:badNonce', 'stale');
    ca.answer(`${BASE}/account`, bad, bad, bad, bad, ACCOUNT_CREATED);
    const err = (await client.account().catch((e: unknown) => e)) as AcmeError;
    expect(err.code).to.equal('TUNA_ACME_BAD_NONCE');
    expect(err.problem?.type).to.equal('urn:ietf:params:acme:error:badNonce');
    expect(ca.seen).to.have.length(4);
  });

  it('carries the problem document of a refused order as TUNA_ACME_REQUEST', async () => {
    ca.answer(`${BASE}/account`, ACCOUNT_CREATED);
    ca.answer(`${BASE}/order`, problem('urn:ietf:params:acme:error:rejectedIdentifier', 'app.test is forbidden'));
    const err = (await client.newOrder(['app.test']).catch((e: unknown) => e)) as AcmeError;
    expect(err.code).to.equal('TUNA_ACME_REQUEST');
    expect(err.problem).to.deep.equal({ type: 'urn:ietf:params:acme:error:rejectedIdentifier', detail: 'app.test is forbidden', status: 400 });
  });

  it('reports an invalid authorization as TUNA_ACME_CHALLENGE_FAILED with the challenge error', async () => {
    ca.answer(`${BASE}/account`, ACCOUNT_CREATED);
    const authz = (status: string, error?: unknown): AcmeHttpResponse =>
      json(200, { status, identifier: { type: 'dns', value: 'app.test' }, challenges: [{ type: 'tls-alpn-01', url: `${BASE}/c`, status, token: 't', ...(error ? { error } : {}) }] });
    ca.answer(`${BASE}/authz`, authz('pending'), authz('invalid', { type: 'urn:ietf:params:acme:error:connection', detail: 'refused' }));
    const err = (await client.waitAuthorization(`${BASE}/authz`).catch((e: unknown) => e)) as AcmeError;
    expect(err.code).to.equal('TUNA_ACME_CHALLENGE_FAILED');
    expect(err.problem?.type).to.equal('urn:ietf:params:acme:error:connection');
    expect(ca.seen.at(-1)!.payload).to.equal(''); // POST-as-GET
  });

  it('stops polling a pending order with TUNA_ACME_TIMEOUT', async () => {
    ca.answer(`${BASE}/account`, ACCOUNT_CREATED);
    const pending = json(200, { status: 'processing', authorizations: [], finalize: `${BASE}/fin` });
    ca.answer(`${BASE}/fin`, pending);
    ca.answer(`${BASE}/o/1`, pending, pending, pending);
    const order = { status: 'ready', authorizations: [], finalize: `${BASE}/fin`, url: `${BASE}/o/1` };
    const err = (await client.finalize(order, Buffer.from([0x30, 0x00])).catch((e: unknown) => e)) as AcmeError;
    expect(err.code).to.equal('TUNA_ACME_TIMEOUT');
    expect(JSON.parse(ca.seen[1]!.payload)).to.deep.equal({ csr: 'MAA' });
  });

  it('derives the key authorization from the RFC 7638 thumbprint of the account key', () => {
    const jwk = publicKey.export({ format: 'jwk' });
    const canonical = `{"crv":"P-256","kty":"EC","x":"${jwk.x}","y":"${jwk.y}"}`;
    const thumbprint = createHash('sha256').update(canonical).digest('base64url');
    expect(client.keyAuthorization('tok')).to.equal(`tok.${thumbprint}`);
  });
});
