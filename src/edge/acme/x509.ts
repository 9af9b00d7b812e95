import { createHash, createPublicKey, randomBytes, sign } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import {
  derBitString, derBoolean, derContext, derInteger, derOctetString, derOid, derSequence, derSet, derUtcTime, derUtf8String,
} from './der.js';

/**
 * PKCS#10 requests (RFC 2986) and the TLS-ALPN-01 challenge certificate (RFC 8737 §3), both for
 * ECDSA P-256 keys signed with SHA-256 (RFC 5758 §3.2), built with our DER encoder.
 */

const OID_ECDSA_SHA256 = '1.2.840.10045.4.3.2';
const OID_COMMON_NAME = '2.5.4.3';
const OID_EXTENSION_REQUEST = '1.2.840.113549.1.9.14';
const OID_SUBJECT_ALT_NAME = '2.5.29.17';
// RFC 8737 §6.1: id-pe-acmeIdentifier.
const OID_ACME_IDENTIFIER = '1.3.6.1.5.5.7.1.31';

const ALGORITHM = derSequence(derOid(OID_ECDSA_SHA256));

function commonName(name: string): Buffer {
  return derSequence(derSet(derSequence(derOid(OID_COMMON_NAME), derUtf8String(name))));
}

function extension(oid: string, critical: boolean, value: Buffer): Buffer {
  return critical ? derSequence(derOid(oid), derBoolean(true), derOctetString(value)) : derSequence(derOid(oid), derOctetString(value));
}

// RFC 5280 §4.2.1.6: GeneralNames with dNSName [2] IMPLICIT IA5String.
function subjectAltNames(names: readonly string[]): Buffer {
  return extension(OID_SUBJECT_ALT_NAME, false, derSequence(...names.map((n) => derContext(2, false, Buffer.from(n, 'ascii')))));
}

function signEcdsa(data: Buffer, key: KeyObject): Buffer {
  // X.509 and PKCS#10 carry ECDSA-Sig-Value, the DER form (RFC 5480 §2.2 / RFC 3279 §2.2.3).
  return sign('sha256', data, { key, dsaEncoding: 'der' });
}

function spkiOf(key: KeyObject): Buffer {
  return createPublicKey(key).export({ type: 'spki', format: 'der' });
}

/** createCsr builds a DER PKCS#10 request for the names (the first is the CN) with a SAN extension request. */
export function createCsr(names: readonly string[], key: KeyObject): Buffer {
  if (names.length === 0) throw new RangeError('createCsr: at least one name');
  const attributes = derContext(0, true, derSequence(derOid(OID_EXTENSION_REQUEST), derSet(derSequence(subjectAltNames(names)))));
  const info = derSequence(derInteger(0), commonName(names[0]!), spkiOf(key), attributes);
  return derSequence(info, ALGORITHM, derBitString(signEcdsa(info, key)));
}

/** SelfSignedInput describes a self-signed certificate (the TLS-ALPN-01 one, or a test's). */
export interface SelfSignedInput {
  hostnames: readonly string[];
  key: KeyObject;
  notBefore: Date;
  notAfter: Date;
  /** RFC 8737 §3: SHA-256 of the key authorization, carried in the critical acmeIdentifier extension */
  acmeIdentifier?: Buffer;
}

/** createSelfSignedCertificate builds a DER X.509 v3 certificate signed by its own key (RFC 5280 §4.1). */
export function createSelfSignedCertificate(input: SelfSignedInput): Buffer {
  const serial = randomBytes(16);
  serial[0] = serial[0]! & 0x7f;
  const name = commonName(input.hostnames[0] ?? '');
  const extensions = [subjectAltNames(input.hostnames)];
  // RFC 8737 §3: critical, extnValue holds Authorization ::= OCTET STRING (SIZE (32)).
  if (input.acmeIdentifier !== undefined) extensions.push(extension(OID_ACME_IDENTIFIER, true, derOctetString(input.acmeIdentifier)));
  const tbs = derSequence(
    derContext(0, true, derInteger(2)), // v3
    derInteger(serial),
    ALGORITHM,
    name,
    derSequence(derUtcTime(input.notBefore), derUtcTime(input.notAfter)),
    name,
    spkiOf(input.key),
    derContext(3, true, derSequence(...extensions)),
  );
  return derSequence(tbs, ALGORITHM, derBitString(signEcdsa(tbs, input.key)));
}

/** createTlsAlpnCertificate builds the TLS-ALPN-01 challenge certificate for a key authorization (RFC 8737 §3). */
export function createTlsAlpnCertificate(hostname: string, keyAuthorization: string, key: KeyObject, now: Date): Buffer {
  const acmeIdentifier = createHash('sha256').update(keyAuthorization, 'ascii').digest();
  // The validator does not check validity dates (RFC 8737 §3); one day either side of now.
  return createSelfSignedCertificate({
    hostnames: [hostname],
    key,
    notBefore: new Date(now.getTime() - 86_400_000),
    notAfter: new Date(now.getTime() + 86_400_000),
    acmeIdentifier,
  });
}

/** derToPem wraps DER bytes in PEM armor (RFC 7468). */
export function derToPem(der: Buffer, label: string): string {
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}
