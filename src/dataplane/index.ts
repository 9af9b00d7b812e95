/** The data plane: router, filters and upstream proxy for every stream that arrives on a tunnel. */
export { DataPlane } from './data-plane.js';
export type { DataPlaneOptions } from './data-plane.js';
export type { ExchangeObserver } from './observer.js';
export { combineObservers } from './observer.js';
export { ACCESS_LOG_FIELDS, AccessLog, compileAccessLogFormat } from './access-log.js';
export { AccessLogFormatError, REDACTED, redactTarget } from '../access-log/index.js';
export type { AccessLogEntry, AccessLogOptions } from './access-log.js';
// tracing.ts imports the OpenTelemetry SDK only inside startTracing: exporting it here loads none of it
export { TraceObserver, startTracing } from './tracing.js';
export type { TracingHandle, TracingOptions } from './tracing.js';
export type { Downstream } from './exchange.js';
export type { HeaderMap } from './headers.js';
export { StaticEndpointResolver, endpointsFromSlices, EndpointPicker } from './endpoints.js';
export type { Endpoint, EndpointResolver } from './endpoints.js';
export { StaticCertificateSource } from './certificates.js';
export type { CertificatePair, CertificateSource } from './certificates.js';
export { compileRouteTable, routeDatagram, routeHttp, routeStream } from './router.js';
export { DEFAULT_UDP_IDLE_TIMEOUT_MS } from './udp-proxy.js';
export type { UdpDatagramDrop, UdpFlowRefusal, UdpObserver } from './udp-proxy.js';
export type { RouteTable, EntryPoint, HttpRouteResult, StreamRouteResult } from './router.js';
export { pickBackend } from './balancer.js';
export type { Random } from './balancer.js';
export * from './errors.js';
