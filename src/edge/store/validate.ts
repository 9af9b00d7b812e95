import { isIPv4, isIPv6 } from 'node:net';
import { StoreInvalidInputError } from './errors.js';
import { PORT_PROTOCOLS, portTransportOf } from './store.js';
import type { LabelSelector, Labels, PortSpec } from './store.js';

/**
 * Input rules the store enforces itself, whoever calls it (control API, CLI, tests): the store is
 * the last line before the database, so it never trusts that a caller validated.
 * Free text (names, label values) is stored verbatim — SQL is always parameterised — but control
 * characters and unbounded lengths are refused.
 */

const DNS_LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** hasControlCharacter reports C0 controls and DEL, which have no place in names or labels. */
function hasControlCharacter(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

/** MAX_LABELS bounds how many labels one record carries. */
export const MAX_LABELS = 64;

/** checkText refuses empty, over-long or control-character text and returns it unchanged. */
export function checkText(field: string, value: string, maxLength: number): string {
  if (value.length === 0) throw new StoreInvalidInputError(field, 'must not be empty');
  if (value.length > maxLength) throw new StoreInvalidInputError(field, `must be at most ${maxLength} characters`);
  if (hasControlCharacter(value)) throw new StoreInvalidInputError(field, 'must not contain control characters');
  return value;
}

/** normalizeHostname lower-cases a DNS name and checks it against RFC 1123 (no wildcard, no IP literal). */
export function normalizeHostname(field: string, hostname: string): string {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  const labels = name.split('.');
  // RFC 1035 §2.3.4: 253 characters in text form; RFC 1123 §2.1: labels may start with a digit.
  if (name.length > 253 || labels.length < 2 || !labels.every((l) => DNS_LABEL.test(l)) || isIPv4(name)) {
    throw new StoreInvalidInputError(field, 'must be a DNS hostname such as app.example.com');
  }
  return name;
}

/** MAX_ADDRESS_PORTS bounds how many ports one address reservation opens (each is a listener on every edge node). */
export const MAX_ADDRESS_PORTS = 256;

/**
 * checkPortSpecs checks the ports of an address reservation and returns them sorted by port: each
 * a port number with a known protocol, no port twice (one listener a port, whatever it speaks).
 */
export function checkPortSpecs(field: string, ports: readonly PortSpec[]): PortSpec[] {
  if (ports.length > MAX_ADDRESS_PORTS) throw new StoreInvalidInputError(field, `must list at most ${MAX_ADDRESS_PORTS} ports`);
  const seen = new Set<string>();
  for (const [i, spec] of ports.entries()) {
    checkPort(`${field}[${i}].port`, spec.port);
    if (!(PORT_PROTOCOLS as readonly string[]).includes(spec.protocol)) throw new StoreInvalidInputError(`${field}[${i}].protocol`, `must be one of ${PORT_PROTOCOLS.join(', ')}`);
    // TCP and UDP ports are apart: 53/tcp and 53/udp may both be listed, 443/https and 443/tls not
    const key = `${portTransportOf(spec.protocol)}/${spec.port}`;
    if (seen.has(key)) throw new StoreInvalidInputError(`${field}[${i}].port`, `port ${spec.port} is listed twice; one protocol a port (udp beside one other)`);
    seen.add(key);
  }
  return sortPortSpecs(ports);
}

/** sortPortSpecs orders ports by port, then protocol in canonical order (the order a reservation keeps them in). */
export function sortPortSpecs(ports: readonly PortSpec[]): PortSpec[] {
  const rank = (p: PortSpec) => PORT_PROTOCOLS.indexOf(p.protocol);
  return ports.map((p) => ({ port: p.port, protocol: p.protocol })).sort((a, b) => a.port - b.port || rank(a) - rank(b));
}

/** checkPort refuses anything that is not a TCP port number 1..65535. */
export function checkPort(field: string, port: number): number {
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new StoreInvalidInputError(field, 'must be an integer port 1..65535');
  }
  return port;
}

/**
 * normalizeAddress checks an IP address literal and returns its canonical text. It refuses what a
 * dedicated address can never be: the unspecified address (a listener on it takes every interface,
 * the edge's own included), broadcast and multicast. Whether the address lies
 * in the edge's pool is the control API's check; the store does not know the pool.
 */
export function normalizeAddress(field: string, address: string): string {
  if (isIPv4(address)) {
    const octets = address.split('.').map(Number);
    const first = octets[0] ?? 0;
    if (octets.every((o) => o === 0)) throw new StoreInvalidInputError(field, 'must not be the unspecified address 0.0.0.0');
    if (octets.every((o) => o === 255)) throw new StoreInvalidInputError(field, 'must not be the broadcast address');
    if (first >= 224) throw new StoreInvalidInputError(field, 'must be a unicast address (not multicast or reserved)');
    return octets.map(String).join('.');
  }
  if (isIPv6(address)) {
    const text = address.toLowerCase();
    if (/^[0:]+$/.test(text)) throw new StoreInvalidInputError(field, 'must not be the unspecified address ::');
    if (text.startsWith('ff')) throw new StoreInvalidInputError(field, 'must be a unicast address (not multicast)');
    return text;
  }
  throw new StoreInvalidInputError(field, 'must be an IPv4 or IPv6 address');
}

/** checkLabels bounds label count and sizes; keys and values are otherwise free text. */
export function checkLabels(field: string, labels: Labels | undefined): Labels {
  const entries = Object.entries(labels ?? {});
  if (entries.length > MAX_LABELS) throw new StoreInvalidInputError(field, `at most ${MAX_LABELS} labels`);
  const out: Record<string, string> = {};
  for (const [key, value] of entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    checkText(`${field}.key`, key, 253);
    if (typeof value !== 'string' || value.length > 1024 || hasControlCharacter(value)) {
      throw new StoreInvalidInputError(`${field}.${key}`, 'must be a string of at most 1024 printable characters');
    }
    out[key] = value;
  }
  return out;
}

/** matchesSelector reports whether labels contain every pair of the selector. */
export function matchesSelector(labels: Labels, selector: LabelSelector | undefined): boolean {
  if (!selector) return true;
  return Object.entries(selector).every(([key, value]) => Object.hasOwn(labels, key) && labels[key] === value);
}
