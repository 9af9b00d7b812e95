import type { HttpFilter } from '../model/index.js';
import { rewritePath } from './path-rewrite.js';

/** RequestRedirect is the redirect filter of the route graph. */
export type RequestRedirect = Extract<HttpFilter, { type: 'RequestRedirect' }>;

const defaultPorts: Record<string, number> = { http: 80, https: 443 };

/** RedirectInput is what a redirect keeps from the original request. */
export interface RedirectInput {
  scheme: string;
  host: string;
  /** the port the client connected to at the edge (the listener's port, in Gateway API terms) */
  publicPort: number;
  path: string;
  search: string;
}

/**
 * redirectLocation builds the Location of a Gateway API RequestRedirect (HTTPRequestRedirectFilter
 * `port`): an explicit port wins; with a scheme and no port, the scheme's well-known port; with
 * neither, the listener's port — here the public port the client reached, which is the listener
 * port on a dedicated address and the real port on a development edge. Port 80 with http and 443
 * with https are not written.
 */
export function redirectLocation(filter: RequestRedirect, req: RedirectInput): string {
  const scheme = filter.scheme ?? req.scheme;
  const host = filter.hostname ?? req.host;
  let port: number | undefined;
  if (filter.port !== undefined) port = filter.port;
  else if (filter.scheme === undefined) port = req.publicPort;
  if (port !== undefined && defaultPorts[scheme] === port) port = undefined;
  const path = filter.path ? rewritePath(req.path, filter.path) : req.path;
  return `${scheme}://${host}${port === undefined ? '' : `:${port}`}${path}${req.search}`;
}
