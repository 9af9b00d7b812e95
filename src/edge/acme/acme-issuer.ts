import { X509Certificate, generateKeyPairSync } from 'node:crypto';
import type { AcmeClient } from './acme-client.js';
import { AcmeOrderError, AcmeUnsupportedChallengeError } from './errors.js';
import type { TlsAlpnChallenges } from './tls-alpn-challenges.js';
import { createCsr } from './x509.js';

/** IssuedCertificate is a PEM chain (leaf first), its private key and the leaf's expiry (ms since the epoch). */
export interface IssuedCertificate {
  chainPem: string;
  keyPem: string;
  notAfter: number;
}

/** CertificateIssuer obtains a certificate for one hostname (ACME in production, a fake in unit tests). */
export interface CertificateIssuer {
  issue(hostname: string): Promise<IssuedCertificate>;
}

const TLS_ALPN_01 = 'tls-alpn-01';

/**
 * AcmeIssuer gets a certificate through one ACME order: TLS-ALPN-01 for every authorization (RFC
 * 8737; the edge's HTTPS listener answers it), then finalize with a CSR for a fresh P-256 key.
 */
export class AcmeIssuer implements CertificateIssuer {
  readonly #client: AcmeClient;
  readonly #challenges: TlsAlpnChallenges;
  readonly #now: () => number;

  constructor(client: AcmeClient, challenges: TlsAlpnChallenges, now: () => number = Date.now) {
    this.#client = client;
    this.#challenges = challenges;
    this.#now = now;
  }

  /** issue runs a whole order for the hostname and returns the certificate. */
  async issue(hostname: string): Promise<IssuedCertificate> {
    const order = await this.#client.newOrder([hostname]);
    for (const url of order.authorizations) await this.#authorize(url);
    // A fresh key per certificate: a renewal never reuses the previous key.
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const done = await this.#client.finalize(order, createCsr([hostname], privateKey));
    const chainPem = await this.#client.downloadCertificate(done);
    const leaf = new X509Certificate(chainPem);
    if (!leaf.checkPrivateKey(privateKey)) throw new AcmeOrderError(`the certificate for ${hostname} does not match the key we sent`);
    return { chainPem, keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), notAfter: Date.parse(leaf.validTo) };
  }

  async #authorize(url: string): Promise<void> {
    const authz = await this.#client.authorization(url);
    if (authz.status === 'valid') return; // reused authorization (RFC 8555 §7.1.4)
    const hostname = authz.identifier.value;
    const challenge = authz.challenges.find((c) => c.type === TLS_ALPN_01 && c.token !== undefined);
    if (challenge?.token === undefined) throw new AcmeUnsupportedChallengeError(hostname, authz.challenges.map((c) => c.type));
    this.#challenges.set(hostname, this.#client.keyAuthorization(challenge.token), new Date(this.#now()));
    try {
      await this.#client.acceptChallenge(challenge.url);
      await this.#client.waitAuthorization(url);
    } finally {
      this.#challenges.delete(hostname);
    }
  }
}
