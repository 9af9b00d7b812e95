import { createHmac, generateKeyPairSync } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { SignJWT } from 'jose';
import type { JWTPayload } from 'jose';
import type { JwtPolicy, PublicJwk } from '../../src/model/index.js';
import { startHttpBackend } from './backend-servers.js';

/** Test signing keys, made fresh in each run: no private key is committed. */

/** TestSigner is a key pair of one algorithm with its public JWK. */
export interface TestSigner {
  alg: 'RS256' | 'ES256' | 'EdDSA' | 'PS256';
  kid: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
  jwk: PublicJwk;
}

/** testSigner generates a key pair (node:crypto) for `alg`, named `kid`. */
export function testSigner(kid: string, alg: TestSigner['alg'] = 'RS256'): TestSigner {
  const pair =
    alg === 'ES256' ? generateKeyPairSync('ec', { namedCurve: 'P-256' }) : alg === 'EdDSA' ? generateKeyPairSync('ed25519') : generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = { ...(pair.publicKey.export({ format: 'jwk' }) as PublicJwk), kid, alg };
  return { alg, kid, privateKey: pair.privateKey, publicKey: pair.publicKey, jwk };
}

/** TEST_ISSUER and TEST_AUDIENCE are what testJwtPolicy accepts and signToken puts in by default. */
export const TEST_ISSUER = 'https://issuer.test';
export const TEST_AUDIENCE = 'api.test';

/** signToken signs claims (iss, aud and a 10-minute exp by default, any of them overridden or removed with undefined). */
export async function signToken(signer: TestSigner, claims: JWTPayload = {}, header: Record<string, unknown> = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const payload: JWTPayload = { iss: TEST_ISSUER, aud: TEST_AUDIENCE, iat: now, exp: now + 600, ...claims };
  for (const k of Object.keys(payload)) if (payload[k] === undefined) delete payload[k];
  return new SignJWT(payload).setProtectedHeader({ alg: signer.alg, kid: signer.kid, ...header }).sign(signer.privateKey);
}

const b64 = (v: unknown): string => Buffer.from(JSON.stringify(v)).toString('base64url');

/** unsignedToken is `alg: none` (RFC 7519 §6): header and claims, empty signature. */
export function unsignedToken(claims: JWTPayload = {}): string {
  const now = Math.floor(Date.now() / 1000);
  return `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ iss: TEST_ISSUER, aud: TEST_AUDIENCE, exp: now + 600, ...claims })}.`;
}

/** hmacWithPublicKey is the key-confusion attack: HS256 with the signer's public key (PEM, and JWK text) as the HMAC secret. */
export function hmacWithPublicKey(signer: TestSigner, secretForm: 'pem' | 'jwk' = 'pem'): string {
  const now = Math.floor(Date.now() / 1000);
  const input = `${b64({ alg: 'HS256', typ: 'JWT', kid: signer.kid })}.${b64({ iss: TEST_ISSUER, aud: TEST_AUDIENCE, exp: now + 600 })}`;
  const secret = secretForm === 'pem' ? (signer.publicKey.export({ type: 'spki', format: 'pem' }) as string) : JSON.stringify(signer.jwk);
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}

/** testJwtPolicy accepts TEST_ISSUER and TEST_AUDIENCE with the signers' keys inline. */
export function testJwtPolicy(signers: TestSigner[], extra: Partial<JwtPolicy> = {}): JwtPolicy {
  return { realm: 'api', issuers: [TEST_ISSUER], audiences: [TEST_AUDIENCE], jwks: { kind: 'inline', keys: signers.map((s) => s.jwk) }, clockSkewSeconds: 60, claimToHeaders: [], require: [], ...extra };
}

/** JwksServer serves a key set on loopback; `keys` may be replaced (a rotation), `fetches` counts GETs. */
export interface JwksServer {
  url: string;
  keys: PublicJwk[];
  fetches: number;
  close(): Promise<void>;
}

/** startJwksServer serves `{"keys": …}` at /jwks on 127.0.0.1. */
export async function startJwksServer(keys: PublicJwk[]): Promise<JwksServer> {
  const state = { keys, fetches: 0 };
  const backend = await startHttpBackend('jwks', (_req, res) => {
    state.fetches++;
    res.setHeader('content-type', 'application/jwk-set+json');
    res.end(JSON.stringify({ keys: state.keys }));
  });
  return {
    url: `http://127.0.0.1:${backend.port}/jwks`,
    get keys() {
      return state.keys;
    },
    set keys(k: PublicJwk[]) {
      state.keys = k;
    },
    get fetches() {
      return state.fetches;
    },
    close: () => backend.close(),
  };
}
