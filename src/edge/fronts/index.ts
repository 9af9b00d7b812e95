/** The edge's public fronts: connections in (sniffing, TLS by SNI and ALPN), HTTP/1.1, HTTP/2, WebSocket, raw TCP/TLS and UDP relayed over tunnel streams, and the connection hygiene of every listener. */
export { PublicFront } from './public-front.js';
export type { EdgeCertificate, PublicWindows } from './public-front.js';
export { DEFAULT_UDP_LIMITS, UdpFront } from './udp-front.js';
export type { UdpLimits, UdpPortTarget } from './udp-front.js';
export { ConnectionGuard, DEFAULT_PUBLIC_CONNECTION_LIMITS } from './connection-guard.js';
export type { GuardCounters, ListenerLimits, PublicConnectionLimits } from './connection-guard.js';
export { ClientFairness } from './client-fairness.js';
export { newRequestIdGenerator } from './front-context.js';
export type { EdgeLimits, FrontContext } from './front-context.js';
export { DEFAULT_HTTP1_FORWARDING, HTTP1_FORWARDING_MODES } from './http1-splice.js';
export type { Http1Forwarding } from './http1-splice.js';
export { parseClientHello } from './sni.js';
export type { ClientHelloResult } from './sni.js';
export { parseAlpnOffer, peekAlpnOffer } from './alpn-offer.js';
export { EDGE_ACCESS_LOG_FIELDS, EdgeAccessLog, compileEdgeAccessLogFormat } from './access-log.js';
export type { EdgeAccessLogEntry, EdgeAccessLogOptions, EdgeProtocol } from './access-log.js';
