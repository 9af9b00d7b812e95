import { isIP } from 'node:net';
import { isValidHostPattern } from '../../model/index.js';

/** HostCheck is a normalised hostname, or why the text is not one tuna can publish. */
export type HostCheck = { ok: true; host: string } | { ok: false; message: string };

/**
 * checkHost normalises a hostname written by a user (DNS names are case-insensitive, RFC 4343) and
 * refuses what the edge cannot claim: IP literals (an address is not a name the edge can route by
 * Host or SNI, and the Ingress API itself forbids them in `rules[].host`) and anything that is not
 * an RFC 1123 name with at most one leading `*.` label.
 */
export function checkHost(raw: string): HostCheck {
  const host = raw.toLowerCase();
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (isIP(bare) !== 0) return { ok: false, message: `host ${raw} is an IP address; tuna publishes DNS names only` };
  if (!isValidHostPattern(host))
    return { ok: false, message: `host ${raw} is not a valid DNS name (RFC 1123, optionally with one leading "*." label)` };
  return { ok: true, host };
}

/**
 * generatedHostname is the name tuna gives an object that asks for none: `<name>-<namespace>.<baseDomain>`
 * (one label under the base domain, so the edge's wildcard certificate covers it). `prefix` names one
 * of several ports: `<prefix>-<name>-<namespace>.<baseDomain>`.
 */
export function generatedHostname(name: string, namespace: string, baseDomain: string, prefix?: string): HostCheck {
  const label = `${prefix !== undefined ? `${prefix}-` : ''}${name}-${namespace}`.toLowerCase();
  const host = `${label}.${baseDomain.toLowerCase()}`;
  if (label.length > 63 || label.includes('.') || !isValidHostPattern(host))
    return {
      ok: false,
      message: `the generated hostname ${host} is not a valid DNS name: "${label}" must be one DNS label of at most 63 characters`,
    };
  return { ok: true, host };
}
