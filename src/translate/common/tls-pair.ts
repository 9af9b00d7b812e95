import { X509Certificate, createPrivateKey } from 'node:crypto';
import type { KeyObject } from 'node:crypto';

/**
 * checkTlsPair says what is wrong with the `tls.crt` and `tls.key` of a `kubernetes.io/tls`
 * Secret, or undefined when they are a PEM certificate and its matching private key. The API
 * server checks only that both keys exist, so a Secret can hold anything; the data plane would
 * fail to load it at the first handshake and serve nothing, so the translator reports it instead
 * (Gateway API ListenerConditionReason InvalidCertificateRef: "the referenced certificate is
 * malformed"). Messages never quote the data: they say which key is wrong and how.
 */
export function checkTlsPair(cert: string, key: string): string | undefined {
  if (cert.trim() === '') return 'tls.crt is empty';
  if (!cert.includes('-----BEGIN CERTIFICATE-----')) return 'tls.crt holds no PEM certificate (no BEGIN CERTIFICATE block)';
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch {
    return 'tls.crt does not parse as a PEM certificate';
  }
  if (key.trim() === '') return 'tls.key is empty';
  if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(key)) return 'tls.key holds no PEM private key (no BEGIN PRIVATE KEY block)';
  if (key.includes('ENCRYPTED')) return 'tls.key is encrypted; it must be an unencrypted PEM private key';
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey({ key, format: 'pem' });
  } catch {
    return 'tls.key does not parse as a PEM private key';
  }
  if (!x509.checkPrivateKey(privateKey)) return 'tls.key is not the private key of the certificate in tls.crt';
  return undefined;
}
