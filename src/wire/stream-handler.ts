import type { IncomingHttpHeaders, ServerHttp2Stream } from 'node:http2';

/**
 * The contract between the tunnel (src/tunnel: sessions the agent holds with the edge) and the data
 * plane (src/dataplane: what to do with each stream that arrives on them).
 */

/** TunnelStreamContext is what the agent knows about a stream besides its headers. */
export interface TunnelStreamContext {
  /** id of the route-graph binding this tunnel connection serves */
  bindingId: string;
  /** the public port at the edge the client connected to (80/443 on shared listeners) */
  publicPort: number;
  /** what the client spoke at the edge */
  publicProtocol: 'http' | 'https' | 'tls' | 'tcp' | 'udp';
  /** the public client's address as the edge saw it */
  clientAddress: string;
  /** request id assigned by the edge (also sent as `x-request-id`) */
  requestId: string;
}

/**
 * TunnelStreamHandler receives every stream the edge opens on a tunnel, with the tunnel's own
 * protocol headers already removed. HTTP requests arrive as ordinary HTTP/2 streams (`:authority`
 * is the original Host, `x-forwarded-*` are set by the edge); WebSocket as extended CONNECT
 * (`:protocol: websocket`, RFC 8441); raw TCP and TLS as plain CONNECT streams carrying bytes;
 * a UDP flow as a plain CONNECT stream of length-prefixed datagrams.
 */
export interface TunnelStreamHandler {
  /**
   * acceptsSplicedHttp1, when true, makes the agent tell the edge (`tuna-features`) that it serves
   * whole HTTP/1.1 connections on one extended CONNECT stream (`:protocol: tuna-http1`,
   * docs/protocol.md §4.5); absent or false, the edge sends it one stream per request.
   */
  readonly acceptsSplicedHttp1?: boolean;
  /**
   * acceptsUdp, when true, makes the agent tell the edge (`tuna-features: udp`) that it takes UDP
   * flows (docs/protocol.md §4.6); absent or false, the edge sends it none.
   */
  readonly acceptsUdp?: boolean;
  handleStream(stream: ServerHttp2Stream, headers: IncomingHttpHeaders, context: TunnelStreamContext): void;
}
