import { isIPv4 } from 'node:net';
import { ControlInvalidRequestError, ControlPortUnavailableError, portTransportOf } from '../../control-api/index.js';
import type { PortPool, PortSpec } from '../../control-api/index.js';
import { isInAddressPool } from '../../model/index.js';

/**
 * Which ports an address reservation may ask the edge to open (`ports` of POST /v1/reservations and
 * PUT /v1/reservations/{id}/ports). Each port becomes a listener on every edge node, so the edge's
 * operator opts in to a range (`store.addressPortRange`); without one a client may ask only for
 * the ports every address serves anyway (`store.addressPorts`). A port the edge itself listens on
 * where the address would bind (its unspecified address, or the reserved address itself) would
 * never open (EADDRINUSE on every node), so it is refused up front, as checkPortInPool does for
 * tcp-port reservations.
 */

/** OwnListener is one of the edge's own listeners (tunnel/control, HTTP, HTTPS, metrics) as bound. */
export interface OwnListener {
  /** what it is, for the message: `tunnel`, `http`, `https`, `metrics` */
  readonly name: string;
  /** the bound host (`0.0.0.0` / `::`: every address) */
  readonly host: string;
  readonly port: number;
}

/** AddressPortRules are the edge's settings the ports of an address reservation are checked against. */
export interface AddressPortRules {
  /** the ports every address serves when its reservation names none */
  readonly addressPorts: readonly PortSpec[];
  /** the inclusive range a reservation's ports may be chosen from; absent: only the ports of `addressPorts` */
  readonly addressPortRange?: PortPool;
  /** the edge's own listeners, read per request (port 0 binds late) */
  readonly ownListeners?: () => readonly OwnListener[];
}

/** AddressTarget is where the ports will be opened: a named address, or one still to be allocated from the pool. */
export type AddressTarget = { readonly address: string } | { readonly pool: string };

const UNSPECIFIED: ReadonlySet<string> = new Set(['0.0.0.0', '::', '']);

// A listener on the unspecified address holds the port on every address of the host; one on the
// address itself holds it there. For an address still to be allocated, any address of the pool
// may be the one.
function collides(listener: OwnListener, target: AddressTarget): boolean {
  if (UNSPECIFIED.has(listener.host)) return true;
  if ('address' in target) return listener.host === target.address;
  return isIPv4(listener.host) && isInAddressPool(target.pool, listener.host);
}

function describeAllowed(rules: AddressPortRules): string {
  const range = rules.addressPortRange;
  if (range !== undefined) return `the address port range ${range.first}-${range.last}`;
  const ports = [...new Set(rules.addressPorts.map((p) => p.port))].sort((a, b) => a - b);
  return `the address port range of this edge: none is configured (store.addressPortRange), so only its addressPorts ${ports.join(', ') || '(none)'}`;
}

function isAllowed(port: number, rules: AddressPortRules): boolean {
  const range = rules.addressPortRange;
  if (range !== undefined) return port >= range.first && port <= range.last;
  return rules.addressPorts.some((p) => p.port === port);
}

/**
 * checkAddressPorts checks the ports an address reservation asks for and returns a copy. A port listed twice is a 400 TUNA_CONTROL_INVALID (one listener a port); a
 * port outside the allowed range, or one of the edge's own listeners on the address, a 400
 * TUNA_CONTROL_PORT_UNAVAILABLE naming the port and the range. `field` names the list in the body.
 */
export function checkAddressPorts(ports: readonly PortSpec[], target: AddressTarget, rules: AddressPortRules, field = 'ports'): PortSpec[] {
  const seen = new Map<string, number>();
  const own = rules.ownListeners?.() ?? [];
  for (const [i, { port, protocol }] of ports.entries()) {
    const at = `${field}[${i}].port`;
    // TCP and UDP ports are apart: a udp port may sit beside one TCP protocol on the same number
    const transport = portTransportOf(protocol);
    const earlier = seen.get(`${transport}/${port}`);
    if (earlier !== undefined) {
      throw new ControlInvalidRequestError(`${at}: port ${port} is already ${field}[${earlier}]; an address serves one protocol a port (udp beside one other)`, at);
    }
    seen.set(`${transport}/${port}`, i);
    if (!isAllowed(port, rules)) throw new ControlPortUnavailableError(`${at}: port ${port} is outside ${describeAllowed(rules)}`, at);
    // the edge's own listeners are TCP: they never hold a UDP port
    const taken = transport === 'udp' ? undefined : own.find((l) => l.port === port && collides(l, target));
    if (taken !== undefined) {
      throw new ControlPortUnavailableError(`${at}: port ${port} is taken by the edge's own ${taken.name} listener (${taken.host}:${port}); choose another in ${describeAllowed(rules)}`, at);
    }
  }
  // The store sorts them (by port, then protocol) and keeps them so.
  return ports.map((p) => ({ port: p.port, protocol: p.protocol }));
}
