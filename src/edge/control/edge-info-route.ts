import { EdgeAnswer, TUNA_VERSION } from '../../control-api/index.js';
import type { EdgeInfo, PortPool, PortSpec } from '../../control-api/index.js';
import { answer } from './routes.js';
import type { Route } from './routes.js';

/** PublicListeners are the bound ports of the edge's public HTTP and HTTPS listeners (undefined: none). */
export interface PublicListeners {
  readonly http?: number;
  readonly https?: number;
  /** the host tcp-port listeners bind */
  readonly tcpHost?: string;
}

/** EdgeInfoOptions are what the edge knows about itself for `GET /v1/edge`. */
export interface EdgeInfoOptions {
  readonly baseDomain: string;
  readonly portPool?: PortPool;
  readonly addressPool?: string;
  /** the ports every dedicated address serves */
  readonly addressPorts: readonly PortSpec[];
  /** the range an address reservation's own ports may come from; undefined: none (only `addressPorts`) */
  readonly addressPortRange?: PortPool | undefined;
  /** read per request: listeners bind after the control API is built, and port 0 is only known then */
  readonly publicListeners: () => PublicListeners;
  readonly version?: string;
}

/** describeEdge builds the EdgeInfo answer from the edge's settings and its listeners now. */
export function describeEdge(options: EdgeInfoOptions): EdgeInfo {
  const { http, https, tcpHost } = options.publicListeners();
  return {
    version: options.version ?? TUNA_VERSION,
    baseDomain: options.baseDomain,
    portPool: options.portPool ?? null,
    addressPool: options.addressPool === undefined ? null : { range: options.addressPool, ports: options.addressPorts },
    http: http === undefined ? null : { port: http },
    https: https === undefined ? null : { port: https },
    scheme: https !== undefined ? 'https' : http !== undefined ? 'http' : null,
    ...(tcpHost !== undefined ? { tcpHost } : {}),
    addressPortRange: options.addressPortRange ?? null,
  };
}

/**
 * edgeInfoRoute is `GET /v1/edge` (any valid key): what a client needs to know about this edge —
 * its base domain, pools, public listeners and version — so the operator need not be told again.
 */
export function edgeInfoRoute(options: EdgeInfoOptions): Route {
  return {
    method: 'GET',
    path: /^\/v1\/edge$/,
    scope: 'any',
    handle: async () => answer(EdgeAnswer, { edge: describeEdge(options) }),
  };
}
