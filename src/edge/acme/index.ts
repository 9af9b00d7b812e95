/** Edge-terminated HTTPS certificates: our ACME client (RFC 8555, TLS-ALPN-01) and the certificate manager. */
export { AcmeClient } from './acme-client.js';
export type { AcmeClientOptions, AcmeOrder } from './acme-client.js';
export { AcmeIssuer } from './acme-issuer.js';
export type { CertificateIssuer, IssuedCertificate } from './acme-issuer.js';
export { parseAlpnOffer, peekAlpnOffer } from '../fronts/alpn-offer.js';
export { CertificateManager } from './certificate-manager.js';
export type { CertificateManagerOptions, CertificateStore, Scheduler, StaticCertificate } from './certificate-manager.js';
export type { CertificateProvider } from './certificate-provider.js';
export * from './errors.js';
export { createHttpsTransport } from './http-transport.js';
export type { AcmeTransport, AcmeHttpRequest, AcmeHttpResponse, HttpsTransportOptions } from './http-transport.js';
export { jwkThumbprint, publicJwk, signJws } from './jws.js';
export { isReservedHostname } from './reserved-hostnames.js';
export type { ReservationLookup } from './reserved-hostnames.js';
export { ACME_TLS_ALPN_PROTOCOL, TlsAlpnChallenges } from './tls-alpn-challenges.js';
export { createCsr, createSelfSignedCertificate, createTlsAlpnCertificate, derToPem } from './x509.js';
export { createCertificateManager, loadOrCreateAccountKey } from './acme-setup.js';
export type { AcmeSettings, CertificateSetupOptions } from './acme-setup.js';
