import { X509Certificate } from 'node:crypto';
import type { ClientValidation } from '../model/index.js';

/**
 * The check behind the identity of an AllowInsecureFallback connection. Such a connection must be
 * served whatever its certificate, but Node's TLS server cannot serve one whose chain failed an RSA
 * signature check by OpenSSL (a CA of the trusted CA's name with another key: the errors OpenSSL
 * queued surface as a socket error and the connection is dropped; seen in Node 24 with the
 * conformance suite's certificates). So the TLS layer of a fallback listener asks for a certificate
 * without the bundle, and this decides, outside any socket, whether the presented certificate was
 * issued by one of the bundle's CAs. It accepts direct issuance only; a chain through an
 * intermediate CA gets no identity (the connection is still served, as the mode says).
 */

const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;
const bundles = new WeakMap<ClientValidation, X509Certificate[]>();

/** caCertificatesOf parses a validation's CA bundle once per graph object. */
function caCertificatesOf(validation: ClientValidation): X509Certificate[] {
  let cas = bundles.get(validation);
  if (!cas) {
    cas = [...validation.caPem.matchAll(PEM_CERTIFICATE)].flatMap((m) => {
      try {
        return [new X509Certificate(m[0])];
      } catch {
        return [];
      }
    });
    bundles.set(validation, cas);
  }
  return cas;
}

/**
 * isIssuedByBundle says whether `leaf` is current, usable for client authentication (its extended
 * key usage, when it has one, names clientAuth) and signed by a current CA certificate of the
 * bundle that X509_check_issued accepts as its issuer (name, key identifiers, keyCertSign).
 */
export function isIssuedByBundle(leaf: X509Certificate, validation: ClientValidation, now: Date = new Date()): boolean {
  if (!isCurrent(leaf, now)) return false;
  const usages = leaf.keyUsage;
  if (usages !== undefined && usages.length > 0 && !usages.includes(CLIENT_AUTH)) return false;
  return caCertificatesOf(validation).some((ca) => ca.ca && isCurrent(ca, now) && leaf.checkIssued(ca) && leaf.verify(ca.publicKey));
}

function isCurrent(cert: X509Certificate, now: Date): boolean {
  return cert.validFromDate.getTime() <= now.getTime() && now.getTime() <= cert.validToDate.getTime();
}
