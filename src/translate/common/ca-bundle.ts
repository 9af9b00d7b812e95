import { X509Certificate } from 'node:crypto';

/**
 * checkCaBundle says what is wrong with the `ca.crt` of a ConfigMap a BackendTLSPolicy names, or
 * undefined when it is one or more PEM certificates. A malformed bundle is the policy's
 * InvalidCACertificateRef ("the data within that resource is malformed", GEP-1897): the data
 * plane could not verify any backend with it. Messages never quote the data.
 */
export function checkCaBundle(pem: string): string | undefined {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) return 'ca.crt holds no PEM certificate (no BEGIN CERTIFICATE block)';
  for (const [i, block] of blocks.entries()) {
    try {
      new X509Certificate(block);
    } catch {
      return `certificate ${i + 1} of ca.crt does not parse`;
    }
  }
  return undefined;
}
