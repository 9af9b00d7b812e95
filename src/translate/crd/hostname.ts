/**
 * Hostname rules for tuna.dev resources. A hostname ends up as a key in the edge's shared HTTP(S)
 * listeners and, for custom domains, in a DNS TXT verification; anything that is not a plain
 * lowercase DNS name is refused with a reason the user can act on.
 */
import { isIP } from 'node:net';
import { isValidHostPattern } from '../../model/index.js';
import { generatedHostname } from '../common/hostname.js';

/** HostnameProblem is why a hostname cannot be used, as a status reason and message. */
export interface HostnameProblem {
  reason: 'InvalidHostname' | 'HostnameIsIPAddress' | 'CustomDomainInBaseDomain';
  message: string;
}

const dnsLabel = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** isDnsLabel says whether s is one RFC 1123 label (lowercase, at most 63 characters). */
export function isDnsLabel(s: string): boolean {
  return dnsLabel.test(s);
}

/**
 * isIpLiteral catches IPv4 and IPv6 literals, bracketed or not (RFC 3986 §3.2.2): an address is
 * not a name the edge can route by Host or SNI (RFC 6066 §3 forbids literal IPs in SNI).
 */
export function isIpLiteral(s: string): boolean {
  const bare = s.startsWith('[') && s.endsWith(']') ? s.slice(1, -1) : s;
  return isIP(bare) !== 0;
}

/** checkSubdomain checks `spec.subdomain` and returns the full hostname or the problem. */
export function checkSubdomain(subdomain: string, baseDomain: string): { hostname: string } | HostnameProblem {
  if (!isDnsLabel(subdomain))
    return {
      reason: 'InvalidHostname',
      message: `subdomain "${subdomain}" must be one DNS label (RFC 1123: lowercase letters, digits and hyphens, at most 63); use customDomain for other names`,
    };
  const hostname = `${subdomain}.${baseDomain}`;
  if (!isValidHostPattern(hostname))
    return { reason: 'InvalidHostname', message: `hostname ${hostname} is not a valid DNS name (at most 253 characters)` };
  return { hostname };
}

/**
 * checkCustomDomain checks `spec.customDomain`: a lowercase DNS name of at least two labels, not
 * an IP address, no wildcard, and not inside the edge's own base domain (those are subdomains,
 * which the edge already owns; a TXT check there would verify nothing).
 */
export function checkCustomDomain(name: string, baseDomain: string): { hostname: string } | HostnameProblem {
  if (isIpLiteral(name)) return { reason: 'HostnameIsIPAddress', message: `customDomain ${name} is an IP address, not a DNS name` };
  if (name.startsWith('*.')) return { reason: 'InvalidHostname', message: `customDomain ${name} is a wildcard; a Domain reserves one exact name` };
  if (!isValidHostPattern(name))
    return {
      reason: 'InvalidHostname',
      message: `customDomain "${name}" is not a valid DNS name (RFC 1123: lowercase labels of letters, digits and hyphens, at most 63 each)`,
    };
  if (!name.includes('.')) return { reason: 'InvalidHostname', message: `customDomain ${name} has a single label; a public DNS name is needed` };
  if (name === baseDomain || name.endsWith(`.${baseDomain}`))
    return {
      reason: 'CustomDomainInBaseDomain',
      message: `customDomain ${name} is inside the edge's base domain ${baseDomain}; use spec.subdomain instead`,
    };
  return { hostname: name };
}

/**
 * tunnelHostname is the hostname of a Tunnel without a domainRef: the rule every source shares,
 * `<name>-<namespace>.<baseDomain>` (common/hostname.ts), with a hint at the way out.
 */
export function tunnelHostname(name: string, namespace: string, baseDomain: string): { hostname: string } | HostnameProblem {
  const generated = generatedHostname(name, namespace, baseDomain);
  if (generated.ok) return { hostname: generated.host };
  return { reason: 'InvalidHostname', message: `${generated.message}; reserve a Domain and set spec.domainRef` };
}
