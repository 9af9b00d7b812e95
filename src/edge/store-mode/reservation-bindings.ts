import { edgeBindingId } from '../../control-api/index.js';
import type { Reservation, ServedReservation, TunnelProtocol } from '../store/index.js';
import type { AddressPort, EdgeBinding, PortTransport } from '../tunnels/index.js';

/**
 * How reservations become edge bindings in store mode (docs/edge.md "Bindings from reservations").
 * The binding id an agent names in `tuna-binding` is derived from the reservation alone, so every
 * edge node computes the same id and an operator can compute it without asking the edge
 * (`edgeBindingId` in src/control-api, which the operator uses):
 *
 * - domain `app.tuna.example` → `binding/host/app.tuna.example` (the shared HTTP/HTTPS listeners);
 * - tcp-port `20022`          → `binding/tcp-port/20022` (a listener on that port);
 * - address `127.77.0.5`      → `binding/address/127.77.0.5` (listeners on that IP's ports).
 */

/** DEFAULT_ADDRESS_PORTS are the ports opened on each dedicated address unless the config says otherwise. */
export const DEFAULT_ADDRESS_PORTS: readonly AddressPort[] = [
  { port: 80, protocol: 'http' },
  { port: 443, protocol: 'tls' },
];

/** bindingIdForReservation returns the binding id that serves a reservation (defined once, for the operator too: edgeBindingId). */
export function bindingIdForReservation(reservation: Pick<Reservation, 'kind' | 'value'>): string {
  return edgeBindingId(reservation);
}

/**
 * bindingFromReservation builds the directory entry of a reservation, or undefined while it cannot
 * be served: a custom domain before its DNS TXT check passed (only verified domains are served).
 * A domain whose live keys all carry `tls` is routed by SNI as raw TLS (the cluster terminates,
 * DESIGN "TLS modes"); any `http`/`https` key makes the edge terminate.
 */
export function bindingFromReservation(served: ServedReservation, addressPorts: readonly AddressPort[]): EdgeBinding | undefined {
  const { reservation, protocols } = served;
  const id = bindingIdForReservation(reservation);
  switch (reservation.kind) {
    case 'domain':
      if (!reservation.verified) return undefined;
      return { id, kind: 'host', hostnames: [reservation.value], tls: isRawTlsOnly(protocols) ? 'terminate-in-cluster' : 'edge' };
    case 'tcp-port':
      return { id, kind: 'tcp-port', hostnames: [], tls: 'edge', port: Number(reservation.value), transports: transportsOf(protocols) };
    case 'address':
      // the reservation's own ports (PUT /v1/reservations/{id}/ports); older ones serve the edge's addressPorts
      return { id, kind: 'address', hostnames: [], tls: 'edge', address: reservation.value, ports: (reservation.ports ?? addressPorts).map((p) => ({ ...p })) };
  }
}

function isRawTlsOnly(protocols: readonly TunnelProtocol[]): boolean {
  return protocols.length > 0 && protocols.every((p) => p === 'tls');
}

/**
 * transportsOf says what a port reservation opens (docs/protocol.md §4.6): its UDP socket once a
 * live key carries `udp`, and its TCP listener unless every live key carries `udp` (a port with no
 * key yet opens TCP, as before UDP existed).
 */
function transportsOf(protocols: readonly TunnelProtocol[]): PortTransport[] {
  const hasUdp = protocols.includes('udp');
  const isUdpOnly = hasUdp && protocols.every((p) => p === 'udp');
  return [...(isUdpOnly ? [] : (['tcp'] as const)), ...(hasUdp ? (['udp'] as const) : [])];
}

/** protocolFitsBinding says whether a key's protocol can be served on a binding of that kind (tcp or udp only on ports). */
export function protocolFitsBinding(protocol: TunnelProtocol, binding: Pick<EdgeBinding, 'kind'>): boolean {
  if (binding.kind === 'host') return protocol === 'http' || protocol === 'https' || protocol === 'tls';
  if (binding.kind === 'tcp-port') return protocol === 'tcp' || protocol === 'udp';
  return true;
}
