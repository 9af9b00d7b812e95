import { isIP } from 'node:net';
import type { PortPool, Reservation, TunnelProtocol } from '../control-api/index.js';
import type { Binding } from '../model/index.js';
import { isKind } from '../translate/index.js';
import type { EdgeControl, EdgeHoldings } from './edge-holdings.js';

/**
 * TCP-port bindings at the edge: a LoadBalancer Service's TCP port
 * (`binding/tcp-port/<ns>/<name>/<port>`) or a `tcp` Tunnel's (`binding/tcp-port/tunnel/<ns>/<name>/<port>`)
 * gets a `tcp-port` reservation of its own, labelled with the graph's binding id
 * (`tuna.dev/binding`), by which a restarted operator finds the same port again, as it finds a
 * Gateway's address. The edge serves the reservation as `binding/tcp-port/<port>`, which differs
 * from the graph's id: the key records it (`edgeBindingId`), so the tunnel names the edge's id and
 * the handshake is accepted (docs/protocol.md "Binding ids").
 *
 * Which port: the one the binding asks for (the Service port) when it lies in the edge's pool and
 * no other binding of this cluster holds it, else any port of the pool; the edge decides, and the
 * status says what it assigned. A Tunnel's TCPPort port is exact: that port or held back. An
 * edge without a pool, or one whose pool is exhausted, holds the binding back (`PortNotAssigned`,
 * with the edge's answer).
 */

/** TcpPortAddress is where the edge serves a ready tcp-port binding: its host (when it names one) and the port it assigned. */
export interface TcpPortAddress {
  /** the edge's tcp-port listener host when it is one IP address */
  ip?: string;
  /** the edge's tcp-port listener host when it is a DNS name */
  hostname?: string;
  port: number;
}

/** TcpPortPending is a tcp-port binding the edge did not give a port, and why. */
export interface TcpPortPending {
  bindingId: string;
  reason: 'PortNotAssigned';
  message: string;
}

/** TcpPortDeps are what holding a tcp-port binding needs from the reconciler. */
export interface TcpPortDeps {
  client: EdgeControl;
  /** the edge's port pool (GET /v1/edge): null: the edge has none; undefined: not known, the edge decides */
  portPool: PortPool | null | undefined;
  /** the host the edge's tcp-port listeners bind (GET /v1/edge `tcpHost`); undefined: not known */
  tcpHost: string | undefined;
  /** the label naming the graph binding a reservation was made for */
  bindingLabel: string;
  /** the cluster and owner-kind labels of what the binding gets at the edge */
  ownerLabels: (b: Binding) => Record<string, string>;
  /** makes the binding hold a live key of the reservation, of this protocol, and marks it ready */
  holdKey: (bindingId: string, reservation: Reservation, labels: Record<string, string>, protocol: TunnelProtocol) => Promise<void>;
  /** the ports being asked for right now: two bindings asking for one port at once must not both be given its reservation */
  asking: Set<number>;
  /** forgets the binding's key: a port it held before goes with its reservation (letGo revokes it) */
  forgetKey: (bindingId: string) => void;
}

/** TcpPortReport is the part of a reconcile's report a tcp-port binding adds to. */
export interface TcpPortReport {
  pending: { push(p: TcpPortPending): number };
  ports?: Map<string, TcpPortAddress>;
  reserved: number;
}

/**
 * holdTcpPort makes a tcp-port binding hold a tcp-port reservation (found again by its label, or
 * reserved) and a `tcp` key recording the edge's binding id, and reports where the edge serves it
 * (`tcpHost`: GET /v1/edge). A refused one is reported pending, and the binding's key forgotten.
 */
export async function holdTcpPort(deps: TcpPortDeps, edge: EdgeHoldings, b: Binding, wantedReservations: Set<string>, report: TcpPortReport): Promise<void> {
  const labels = deps.ownerLabels(b);
  let reservation = edge.tcpPort(b.id) ?? heldForTunnel(deps, edge, b);
  if (reservation === undefined) {
    const got = await reserveTcpPort(deps, edge, b, { ...labels, [deps.bindingLabel]: b.id });
    if ('pending' in got) {
      deps.forgetKey(b.id);
      report.pending.push(got.pending);
      return;
    }
    reservation = got.reservation;
    edge.addReservation(reservation);
    report.reserved++;
  }
  wantedReservations.add(reservation.id);
  // a UDP port's key is `udp`: the edge opens the port's UDP socket once a live key is (docs/protocol.md §4.6)
  await deps.holdKey(b.id, reservation, labels, b.transport === 'udp' ? 'udp' : 'tcp');
  report.ports?.set(b.id, tcpPortAddress(deps.tcpHost, reservation));
}

/**
 * heldForTunnel is the reservation a `tcp` Tunnel's binding uses as it is: the port its TCPPort
 * asked for, held by this cluster for no binding (the TCPPort's own reservation). A Service never
 * takes it: the port is the TCPPort's.
 */
function heldForTunnel(deps: TcpPortDeps, edge: EdgeHoldings, b: Binding): Reservation | undefined {
  if (!isKind(b.source, 'Tunnel') || b.port === undefined || b.port === 0) return undefined;
  const held = edge.tcpPortAt(b.port);
  return held !== undefined && held.labels[deps.bindingLabel] === undefined ? held : undefined;
}

/**
 * reserveTcpPort asks the edge for the port the binding asks for where it may get it, else for any
 * port of its pool. A Tunnel's TCPPort names its port exactly (docs/crds.md): it gets that one or is
 * held back, never another.
 */
async function reserveTcpPort(deps: TcpPortDeps, edge: EdgeHoldings, b: Binding, labels: Record<string, string>): Promise<{ reservation: Reservation } | { pending: TcpPortPending }> {
  const asked = b.port ?? 0;
  const pool = deps.portPool;
  const what = asked > 0 ? `TCP port ${asked}` : 'a TCP port';
  const isInPool = pool === undefined || (pool !== null && asked >= pool.first && asked <= pool.last);
  // a port this cluster holds for another binding (or a TCPPort) is taken: asking for it would adopt it
  const isAskable = asked > 0 && isInPool && edge.tcpPortAt(asked) === undefined && !deps.asking.has(asked);
  const isExact = asked > 0 && isKind(b.source, 'Tunnel');
  if (isExact && !isAskable) {
    const why = isInPool ? 'another binding of this cluster holds it' : `it is outside the edge's TCP port pool${pool ? ` ${pool.first}-${pool.last}` : ''}`;
    return { pending: { bindingId: b.id, reason: 'PortNotAssigned', message: `${what} is not served: ${why}` } };
  }
  let refusal = '';
  if (isAskable) {
    deps.asking.add(asked);
    try {
      const { reservation } = await deps.client.reserve({ kind: 'tcp-port', port: asked, labels });
      edge.addReservation(reservation);
      return { reservation };
    } catch (err) {
      if (isExact) return { pending: { bindingId: b.id, reason: 'PortNotAssigned', message: `${what} is not served: the edge refused it: ${(err as Error).message}` } };
      refusal = `; the edge refused port ${asked}: ${(err as Error).message}`;
    } finally {
      deps.asking.delete(asked);
    }
  }
  const refuse = (why: string): { pending: TcpPortPending } => ({ pending: { bindingId: b.id, reason: 'PortNotAssigned', message: `${what} is not served: ${why}${refusal}` } });
  if (pool === null) return refuse('the edge has no TCP port pool');
  try {
    return { reservation: (await deps.client.reserve({ kind: 'tcp-port', labels })).reservation };
  } catch (err) {
    return refuse(`the edge assigned no port from its pool: ${(err as Error).message}`);
  }
}

/**
 * tcpPortAddress is where the edge serves a tcp-port reservation: the host its tcp-port listeners
 * bind (`tcpHost` of GET /v1/edge) when that names one address, and the port. A listener on every
 * address (`0.0.0.0`, `::`) names none: the status then keeps the Service's hostname under the
 * base domain, whose wildcard DNS record points at the edge.
 */
export function tcpPortAddress(tcpHost: string | undefined, reservation: Reservation): TcpPortAddress {
  const port = Number(reservation.value);
  if (tcpHost === undefined || tcpHost === '' || tcpHost === '0.0.0.0' || tcpHost === '::') return { port };
  return isIP(tcpHost) !== 0 ? { ip: tcpHost, port } : { hostname: tcpHost, port };
}
