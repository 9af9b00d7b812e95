import type { ReservationKind } from './records.js';

/**
 * edgeBindingId is the binding id that serves a reservation at the edge (docs/protocol.md
 * "Binding ids"), derived from the reservation alone, so every edge node computes the same id and
 * the operator can name it in a tunnel's handshake without asking the edge:
 *
 * - domain `app.tuna.example` → `binding/host/app.tuna.example`;
 * - tcp-port `20022`          → `binding/tcp-port/20022`;
 * - address `127.77.0.5`      → `binding/address/127.77.0.5`.
 */
export function edgeBindingId(reservation: { readonly kind: ReservationKind; readonly value: string }): string {
  switch (reservation.kind) {
    case 'domain':
      return `binding/host/${reservation.value}`;
    case 'tcp-port':
      return `binding/tcp-port/${reservation.value}`;
    case 'address':
      return `binding/address/${reservation.value}`;
  }
}
