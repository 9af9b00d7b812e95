import { ControlNotFoundError } from '../control-api/index.js';
import type { ControlClient, Reservation, ReservationKind } from '../control-api/index.js';

/**
 * findHeldReservation finds one of the account's held reservations of a kind by its id or its
 * value (`app.example.com`, `30001`, `127.77.0.3`), so users and scripts can name what they
 * reserved without keeping ids. The control API itself addresses reservations by id only.
 */
export async function findHeldReservation(client: ControlClient, kind: ReservationKind, target: string): Promise<Reservation> {
  const { reservations } = await client.listReservations();
  const ofKind = reservations.filter((r) => r.kind === kind);
  const value = target.toLowerCase().replace(/\.$/, '');
  const match = ofKind.find((r) => r.id === target) ?? ofKind.find((r) => r.value === value);
  if (!match) throw new ControlNotFoundError(`no ${kind} reservation ${JSON.stringify(target)} held by this account (see tuna reserve list)`);
  return match;
}
