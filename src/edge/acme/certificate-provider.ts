import type { SecureContext } from 'node:tls';

/**
 * CertificateProvider is what the public front asks for a certificate by SNI name. `resolve` may
 * load from the store or issue on demand (the TLS handshake waits); `challenge` answers TLS-ALPN-01
 * validators (RFC 8737) synchronously from memory.
 */
export interface CertificateProvider {
  /** resolve returns the context to terminate TLS for a server name, or undefined (the handshake fails) */
  resolve(servername: string): Promise<SecureContext | undefined>;
  /** challenge returns the TLS-ALPN-01 context for a name with an authorization in flight */
  challenge?(servername: string): SecureContext | undefined;
  /** expiries lists the certificates it holds now and when each expires (ms since the epoch), for /metrics */
  expiries?(): { hostname: string; notAfter: number }[];
}
