import { generateKeyPairSync } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import type { SecureContext } from 'node:tls';
import { createTlsAlpnCertificate, derToPem } from './x509.js';

/** ACME_TLS_ALPN_PROTOCOL is the ALPN protocol a TLS-ALPN-01 validator offers, alone (RFC 8737 §3, §6.2). */
export const ACME_TLS_ALPN_PROTOCOL = 'acme-tls/1';

/**
 * TlsAlpnChallenges holds the challenge certificates of the authorizations in flight, by hostname.
 * The public front serves one only to a ClientHello that offers `acme-tls/1` for that SNI name;
 * every other client keeps getting the regular certificate.
 */
export class TlsAlpnChallenges {
  readonly #contexts = new Map<string, SecureContext>();

  /** set prepares the challenge certificate for a hostname and key authorization. */
  set(hostname: string, keyAuthorization: string, now: Date): void {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const cert = derToPem(createTlsAlpnCertificate(hostname, keyAuthorization, privateKey, now), 'CERTIFICATE');
    const key = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    this.#contexts.set(hostname.toLowerCase(), createSecureContext({ cert, key }));
  }

  /** delete drops a hostname's challenge once its authorization is decided. */
  delete(hostname: string): void {
    this.#contexts.delete(hostname.toLowerCase());
  }

  /** contextFor returns the challenge context for an SNI name, if an authorization is in flight. */
  contextFor(servername: string): SecureContext | undefined {
    return this.#contexts.get(servername.toLowerCase());
  }
}
