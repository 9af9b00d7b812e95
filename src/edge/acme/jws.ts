import { createHash, sign } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { base64url } from './base64url.js';

/**
 * ACME request signing (RFC 8555 §6.2): flattened JWS JSON (RFC 7515 §7.2.2) with ES256
 * (RFC 7518 §3.4), a `jwk` header for newAccount and a `kid` (the account URL) afterwards.
 */

/** EcJwk is the public JWK of a P-256 key (RFC 7518 §6.2.1). */
export interface EcJwk {
  kty: 'EC';
  crv: 'P-256';
  x: string;
  y: string;
}

/** FlattenedJws is the body of every ACME POST. */
export interface FlattenedJws {
  protected: string;
  payload: string;
  signature: string;
}

/** publicJwk exports the public part of a P-256 key as a JWK with only the required members. */
export function publicJwk(key: KeyObject): EcJwk {
  const jwk = key.export({ format: 'jwk' });
  if (jwk.kty !== 'EC' || jwk.crv !== 'P-256' || jwk.x === undefined || jwk.y === undefined) {
    throw new TypeError('publicJwk: the account key must be an ECDSA P-256 key');
  }
  return { kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y };
}

/** jwkThumbprint is the RFC 7638 SHA-256 thumbprint: required members in lexicographic order. */
export function jwkThumbprint(jwk: EcJwk): string {
  const canonical = JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y });
  return base64url(createHash('sha256').update(canonical, 'utf8').digest());
}

/** JwsSigner is the key identity of a request: the JWK before the account exists, its URL after. */
export type JwsSigner = { kind: 'jwk'; jwk: EcJwk } | { kind: 'kid'; kid: string };

/** signJws signs a payload (undefined means POST-as-GET, an empty payload: RFC 8555 §6.3). */
export function signJws(key: KeyObject, signer: JwsSigner, url: string, nonce: string, payload: unknown): FlattenedJws {
  const header = { alg: 'ES256', nonce, url, ...(signer.kind === 'jwk' ? { jwk: signer.jwk } : { kid: signer.kid }) };
  const protectedPart = base64url(JSON.stringify(header));
  const payloadPart = payload === undefined ? '' : base64url(JSON.stringify(payload));
  // JWS wants the raw r||s form (RFC 7518 §3.4), not DER.
  const signature = sign('sha256', Buffer.from(`${protectedPart}.${payloadPart}`, 'ascii'), { key, dsaEncoding: 'ieee-p1363' });
  return { protected: protectedPart, payload: payloadPart, signature: base64url(signature) };
}
