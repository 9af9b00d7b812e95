import type { ListenerStatus, PortPool, PortProtocol, PortSpec, Reservation } from '../control-api/index.js';
import type { Listener } from '../model/index.js';

/**
 * The ports of a Gateway's dedicated address. The edge opens on an address exactly the ports its
 * reservation names (`ports`, within the edge's `addressPortRange`), or, on an edge without a
 * range, the fixed list of its config (`addressPool.ports`) on every address. Which ports a
 * Gateway needs comes from its listeners in the route graph; which of them the edge can open,
 * and whether it did, is said here, per port, so that one unavailable port holds back only the
 * listeners on it (Gateway API v1 ListenerConditionReason PortUnavailable: "the Listener requested
 * a port that is not available") and the Gateway's other listeners are served.
 */

/** AddressPortLimits is what `GET /v1/edge` says about the ports of an address reservation. */
export interface AddressPortLimits {
  /** `addressPortRange`: the inclusive range an address may ask for; null: only `fixed`, and no `ports` are sent */
  range: PortPool | null;
  /** `addressPool.ports`: what an address serves when its reservation names none */
  fixed: readonly PortSpec[];
}

/** PortProblem is one port of an address binding that is not served, and why (a sentence for the user). */
export interface PortProblem {
  port: number;
  /** `udp`: the port's UDP socket (a UDP listener's); absent: its TCP listener */
  transport?: 'udp';
  /** unavailable: the edge cannot be asked for it or refused it; failed: it could not listen; opening: not reported listening yet */
  state: 'unavailable' | 'failed' | 'opening';
  message: string;
}

/**
 * portProtocolOf is the public protocol of a listener's port on an address. HTTPS and TLS both
 * reach the edge as raw TLS: a Gateway's TLS is terminated in the cluster or passed through to the
 * backend, never at the edge (DESIGN.md "TLS modes"), and the edge routes the stream as it comes.
 */
export function portProtocolOf(l: Pick<Listener, 'protocol'>): PortProtocol {
  switch (l.protocol) {
    case 'http':
    case 'tcp':
    case 'udp':
      return l.protocol;
    case 'https':
    case 'tls':
      return 'tls';
  }
}

/** isSameTransport tells whether two protocols need the same kind of socket (UDP beside one TCP protocol shares a port number). */
function isSameTransport(a: PortProtocol, b: PortProtocol): boolean {
  return (a === 'udp') === (b === 'udp');
}

/** udpOf marks a problem of a UDP port (`transport: udp`), so that it holds back only the UDP listeners on that number. */
export function udpOf(p: PortSpec): { transport?: 'udp' } {
  return p.protocol === 'udp' ? { transport: 'udp' } : {};
}

/** comparePorts orders ports as the edge lists them: by port, then protocol. */
function comparePorts(a: PortSpec, b: PortSpec): number {
  return a.port - b.port || (a.protocol < b.protocol ? -1 : a.protocol > b.protocol ? 1 : 0);
}

/** portKey names a port and its protocol. */
function portKey(p: PortSpec): string {
  return `${p.port}/${p.protocol}`;
}

/** samePorts tells whether two lists name the same ports with the same protocols, in any order. */
export function samePorts(a: readonly PortSpec[], b: readonly PortSpec[]): boolean {
  const keys = new Set(a.map(portKey));
  return keys.size === new Set(b.map(portKey)).size && b.every((p) => keys.has(portKey(p)));
}

/** AddressPortPlan is what to ask the edge for, and the ports that cannot be asked for. */
export interface AddressPortPlan {
  /** the ports to ask for, sorted by port then protocol */
  asked: PortSpec[];
  unavailable: PortProblem[];
}

/**
 * planAddressPorts maps an address binding's listeners to the ports its address needs and keeps
 * those the edge can open: inside its range, or (an edge without one) in its fixed list with the
 * same protocol. Two TCP protocols on one port cannot both be served (UDP may sit beside one): the
 * first in port order is asked.
 */
export function planAddressPorts(listeners: readonly Listener[], limits: AddressPortLimits): AddressPortPlan {
  const wanted = new Map<string, PortSpec>();
  for (const l of listeners) {
    const spec = { port: l.port, protocol: portProtocolOf(l) };
    wanted.set(portKey(spec), spec);
  }
  const asked: PortSpec[] = [];
  const unavailable: PortProblem[] = [];
  const fixed = new Set(limits.fixed.map(portKey));
  for (const p of [...wanted.values()].sort(comparePorts)) {
    const other = asked.find((q) => q.port === p.port && isSameTransport(q.protocol, p.protocol));
    if (other !== undefined) {
      unavailable.push({ port: p.port, ...udpOf(p), state: 'unavailable', message: `port ${p.port} is not available for ${p.protocol}: the address serves it as ${other.protocol}` });
      continue;
    }
    const range = limits.range;
    if (range !== null && (p.port < range.first || p.port > range.last)) {
      unavailable.push({ port: p.port, ...udpOf(p), state: 'unavailable', message: `port ${p.port} is not available: the edge serves ports ${range.first}-${range.last} on its addresses` });
      continue;
    }
    if (range === null && !fixed.has(portKey(p))) {
      const list = limits.fixed.map((q) => `${q.port} (${q.protocol})`).join(', ') || 'none';
      unavailable.push({ port: p.port, ...udpOf(p), state: 'unavailable', message: `port ${p.port} (${p.protocol}) is not available: the edge serves only ports ${list} on its addresses` });
      continue;
    }
    asked.push(p);
  }
  return { asked, unavailable };
}

/**
 * servedPorts is what an address reservation serves: the ports it names, or the edge's fixed list
 * when it names none (a reservation made before ports were asked for, or by an edge without a range).
 */
export function servedPorts(reservation: Reservation, limits: AddressPortLimits): readonly PortSpec[] {
  return reservation.ports ?? limits.fixed;
}

/**
 * listenerProblems checks each asked port the reservation serves against the listeners the edge
 * reports (`status.listeners` of the answering node): a failed one is unavailable with the edge's
 * error until it listens; one not reported yet, or just asked for (`isFresh`), is opening. A
 * reservation without a status (an edge that does not report them) is trusted.
 */
export function listenerProblems(reservation: Reservation, asked: readonly PortSpec[], isFresh: (p: PortSpec) => boolean): PortProblem[] {
  const problems: PortProblem[] = [];
  const listeners = reservation.status?.listeners;
  for (const p of asked) {
    if (isFresh(p)) {
      problems.push({ port: p.port, ...udpOf(p), state: 'opening', message: `port ${p.port} is not served yet: the edge is opening it on ${reservation.value}` });
      continue;
    }
    if (listeners === undefined) continue;
    // the edge reports a UDP socket with protocol `udp`, a TCP listener with the port's protocol
    const seen = listeners.find((l) => l.port === p.port && (l.protocol === 'udp') === (p.protocol === 'udp'));
    if (seen === undefined) problems.push({ port: p.port, ...udpOf(p), state: 'opening', message: `port ${p.port} is not served yet: the edge has not reported it listening on ${reservation.value}` });
    else if (seen.state === 'failed') problems.push({ port: p.port, ...udpOf(p), state: 'failed', message: failedMessage(seen) });
  }
  return problems;
}

/** failedMessage says why the edge could not listen on a port, and when it tries again. */
function failedMessage(l: ListenerStatus): string {
  const retry = l.retryAt === null ? '' : `; it tries again at ${new Date(l.retryAt).toISOString()}`;
  return `port ${l.port} is not available: the edge could not listen on ${l.address}:${l.port}: ${l.error ?? 'unknown error'} (${l.failures} attempt(s) failed${retry})`;
}
