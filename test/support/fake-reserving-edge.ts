import { ControlConflictError } from '../../src/control-api/index.js';
import type { LabelSelector, PortSpec, Reservation, ReservationRequest, TunnelKey, TunnelKeyRequest } from '../../src/control-api/index.js';
import type { EdgeControl } from '../../src/operator/index.js';

/**
 * FakeReservingEdge is a control API held in memory that reserves as the edge's store does (for
 * the CRDs' reservations): domains (a name under `baseDomain` is a verified subdomain, any other a
 * custom domain waiting for DNS) and TCP ports (by number, or the lowest free one of `pool`); a
 * reservation the account already holds is adopted by value or by name, with the labels replaced.
 * `takenElsewhere` holds values another account reserved (a 409 TUNA_STORE_CONFLICT); `log` lists
 * every call.
 */
export class FakeReservingEdge implements EdgeControl {
  readonly reservations = new Map<string, Reservation>();
  readonly keys = new Map<string, TunnelKey>();
  readonly takenElsewhere = new Set<string>();
  readonly log: string[] = [];
  #next = 0;

  constructor(
    readonly baseDomain = 'tuna.example.com',
    readonly pool = { first: 20000, last: 20009 },
  ) {}

  /** calls counts the calls of one method. */
  calls(method: string): number {
    return this.log.filter((l) => l === method || l.startsWith(`${method} `)).length;
  }

  listReservations(labels?: LabelSelector) {
    this.log.push('listReservations');
    return Promise.resolve({ reservations: [...this.reservations.values()].filter((r) => matches(r.labels, labels)) });
  }

  listTunnelKeys(labels?: LabelSelector) {
    this.log.push('listTunnelKeys');
    return Promise.resolve({ tunnelKeys: [...this.keys.values()].filter((k) => k.revokedAt === null && matches(k.labels, labels)) });
  }

  reserve(body: ReservationRequest) {
    const value = body.kind === 'domain' ? (body.hostname ?? '') : body.port !== undefined ? String(body.port) : '';
    this.log.push(`reserve ${body.kind} ${value || '(pool)'}${body.name !== undefined ? ` name=${body.name}` : ''}`);
    const held = [...this.reservations.values()].find((r) => (body.name !== undefined && r.name === body.name) || (value !== '' && r.kind === body.kind && r.value === value));
    if (held !== undefined) {
      const adopted: Reservation = { ...held, labels: body.labels ?? held.labels, name: body.name ?? held.name };
      this.reservations.set(held.id, adopted);
      return Promise.resolve({ reservation: adopted, created: false });
    }
    if (value !== '' && this.takenElsewhere.has(value)) return Promise.reject(new ControlConflictError(`${body.kind} ${value} is reserved by another account`));
    let assigned = value;
    if (assigned === '') {
      const used = new Set([...this.reservations.values()].filter((r) => r.kind === 'tcp-port').map((r) => Number(r.value)));
      for (let p = this.pool.first; p <= this.pool.last && assigned === ''; p++) if (!used.has(p) && !this.takenElsewhere.has(String(p))) assigned = String(p);
      if (assigned === '') return Promise.reject(new ControlConflictError('no free TCP port in the pool', 'TUNA_STORE_POOL_EXHAUSTED'));
    }
    const isCustom = body.kind === 'domain' && !value.endsWith(`.${this.baseDomain}`);
    const reservation: Reservation = {
      id: `r${++this.#next}`,
      accountId: 'a',
      kind: body.kind,
      value: assigned,
      name: body.name ?? null,
      labels: body.labels ?? {},
      domainType: body.kind === 'domain' ? (isCustom ? 'custom' : 'subdomain') : null,
      verificationToken: isCustom ? `token-${this.#next}` : null,
      verified: !isCustom,
      createdAt: 0,
      updatedAt: 0,
    };
    this.reservations.set(reservation.id, reservation);
    return Promise.resolve({ reservation, created: true });
  }

  /** setReservationPorts names the ports of an address reservation (the reconciler's CRD tests never call it). */
  setReservationPorts(id: string, ports: readonly PortSpec[]) {
    this.log.push(`setReservationPorts ${id}`);
    const held = this.reservations.get(id);
    if (held === undefined) return Promise.reject(new Error(`no reservation ${id}`));
    const changed: Reservation = { ...held, ports: [...ports] };
    this.reservations.set(id, changed);
    return Promise.resolve({ reservation: changed });
  }

  mintTunnelKey(body: TunnelKeyRequest) {
    this.log.push(`mintTunnelKey ${this.reservations.get(body.reservationId)?.value ?? ''}`);
    const id = `k${++this.#next}`;
    const tunnelKey: TunnelKey = { id, accountId: 'a', reservationId: body.reservationId, protocol: body.protocol, maxConnections: body.maxConnections ?? 1, expiresAt: 0, labels: body.labels ?? {}, createdAt: 0, rotatedAt: null, revokedAt: null };
    this.keys.set(id, tunnelKey);
    return Promise.resolve({ tunnelKey, token: `tuna_tk_${id}` });
  }

  revokeTunnelKey(id: string) {
    this.log.push(`revokeTunnelKey ${id}`);
    const key = this.keys.get(id);
    if (key === undefined) return Promise.reject(new Error(`no key ${id}`));
    const revoked = { ...key, revokedAt: 1 };
    this.keys.set(id, revoked);
    return Promise.resolve({ tunnelKey: revoked });
  }

  release(id: string) {
    const reservation = this.reservations.get(id);
    this.log.push(`release ${reservation?.value ?? id}`);
    if (reservation === undefined) return Promise.reject(new Error(`no reservation ${id}`));
    this.reservations.delete(id);
    const revokedTunnelKeyIds: string[] = [];
    for (const k of this.keys.values())
      if (k.reservationId === id && k.revokedAt === null) {
        this.keys.set(k.id, { ...k, revokedAt: 1 });
        revokedTunnelKeyIds.push(k.id);
      }
    return Promise.resolve({ reservation, revokedTunnelKeyIds });
  }

  /** byValue finds a held reservation by its value. */
  byValue(value: string): Reservation | undefined {
    return [...this.reservations.values()].find((r) => r.value === value);
  }
}

function matches(labels: Readonly<Record<string, string>>, selector: LabelSelector | undefined): boolean {
  return Object.entries(selector ?? {}).every(([k, v]) => labels[k] === v);
}
