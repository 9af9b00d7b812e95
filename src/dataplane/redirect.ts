import type { HttpFilter } from '../model/index.js';
import { portOfAuthority } from './host.js';
import { rewritePath } from './path-rewrite.js';

/** RequestRedirect is the redirect filter of the route graph. */
export type RequestRedirect = Extract<HttpFilter, { type: 'RequestRedirect' }>;

const defaultPorts: Record<string, number> = { http: 80, https: 443 };

/** RedirectInput is what a redirect keeps from the original request. */
export interface RedirectInput {
  scheme: string;
  host: string;
  authority: string;
  path: string;
  search: string;
}

/**
 * redirectLocation builds the Location of a Gateway API RequestRedirect. The port: an explicit
 * one wins; when only the scheme changes, the scheme's default port is implied (so it is left
 * out); otherwise the request's own port is kept. Well-known ports are never written.
 */
export function redirectLocation(filter: RequestRedirect, req: RedirectInput): string {
  const scheme = filter.scheme ?? req.scheme;
  const host = filter.hostname ?? req.host;
  let port: number | undefined;
  if (filter.port !== undefined) port = filter.port;
  else if (filter.scheme === undefined) port = portOfAuthority(req.authority);
  if (port !== undefined && defaultPorts[scheme] === port) port = undefined;
  const path = filter.path ? rewritePath(req.path, filter.path) : req.path;
  return `${scheme}://${host}${port === undefined ? '' : `:${port}`}${path}${req.search}`;
}
