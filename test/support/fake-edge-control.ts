import type { LabelSelector, ListenerStatus, PortSpec, Reservation, ReservationRequest, TunnelKey, TunnelKeyRequest } from '../../src/control-api/index.js';
import type { EdgeControl } from '../../src/operator/index.js';

/**
 * FakeEdgeControl is the part of the control API the reconciler calls, held in memory: domain
 * reservations (subdomains, verified at once), address reservations (127.77.0.N in turn, with the
 * ports they name; `listeners` answers their `status.listeners` in lists, absent: no status) and
 * tunnel keys, filtered by labels as the edge does.
 * It counts each call by method and the most calls in flight at once; `gate` (when set) is awaited
 * by every call (given its method) before it answers, so a test can hold calls back, slow them down
 * or fail them.
 */
export class FakeEdgeControl implements EdgeControl {
  readonly reservations = new Map<string, Reservation>();
  readonly keys = new Map<string, TunnelKey>();
  readonly calls: Record<'listReservations' | 'listTunnelKeys' | 'reserve' | 'mintTunnelKey' | 'revokeTunnelKey' | 'release', number> = {
    listReservations: 0,
    listTunnelKeys: 0,
    reserve: 0,
    mintTunnelKey: 0,
    revokeTunnelKey: 0,
    release: 0,
  };
  /** every call in order, with its argument (a hostname for reserve, a reservation's value for mint) */
  readonly log: string[] = [];
  inFlight = 0;
  maxInFlight = 0;
  gate: ((method: keyof FakeEdgeControl['calls']) => Promise<void>) | undefined;
  /** the listeners the edge reports for an address reservation in a list answer (absent: it reports none) */
  listeners: ((r: Reservation) => ListenerStatus[]) | undefined;
  /** when set, setReservationPorts fails with it */
  refusePorts: Error | undefined;
  /** the bodies of every address reserve and setReservationPorts call, in order */
  readonly bodies: unknown[] = [];
  #next = 0;
  #addresses = 0;

  /** total is the number of calls made so far. */
  total(): number {
    return Object.values(this.calls).reduce((a, b) => a + b, 0);
  }

  listReservations(labels?: LabelSelector) {
    const withStatus = (r: Reservation): Reservation => (r.kind === 'address' && this.listeners !== undefined ? { ...r, status: { listeners: this.listeners(r) } } : r);
    return this.#call('listReservations', '', () => ({ reservations: [...this.reservations.values()].filter((r) => matches(r.labels, labels)).map(withStatus) }));
  }

  listTunnelKeys(labels?: LabelSelector) {
    return this.#call('listTunnelKeys', '', () => ({ tunnelKeys: [...this.keys.values()].filter((k) => k.revokedAt === null && matches(k.labels, labels)) }));
  }

  reserve(body: ReservationRequest) {
    if (body.kind === 'address') return this.#reserveAddress(body);
    const value = body.kind === 'domain' ? (body.hostname ?? '') : '';
    return this.#call('reserve', value, () => {
      const id = `r${++this.#next}`;
      const reservation: Reservation = { id, accountId: 'a', kind: 'domain', value, name: null, labels: body.labels ?? {}, domainType: 'subdomain', verificationToken: null, verified: true, createdAt: 0, updatedAt: 0 };
      this.reservations.set(id, reservation);
      return { reservation, created: true };
    });
  }

  #reserveAddress(body: ReservationRequest) {
    this.bodies.push(body);
    const value = body.address ?? `127.77.0.${++this.#addresses}`;
    return this.#call('reserve', `address ${value}`, () => {
      const id = `r${++this.#next}`;
      const reservation: Reservation = { id, accountId: 'a', kind: 'address', value, name: null, labels: body.labels ?? {}, domainType: null, verificationToken: null, verified: true, createdAt: 0, updatedAt: 0, ...(body.ports !== undefined ? { ports: body.ports } : {}) };
      this.reservations.set(id, reservation);
      return { reservation, created: true };
    });
  }

  /** setReservationPorts names the ports of an address reservation (every one). */
  setReservationPorts(id: string, ports: readonly PortSpec[]) {
    // counted apart from `calls`, whose exact shape other tests compare
    this.bodies.push({ id, ports });
    this.log.push(`setReservationPorts ${id}`);
    const held = this.reservations.get(id);
    if (held === undefined) return Promise.reject(new Error(`no reservation ${id}`));
    if (this.refusePorts !== undefined) return Promise.reject(this.refusePorts);
    const changed: Reservation = { ...held, ports: [...ports] };
    this.reservations.set(id, changed);
    return Promise.resolve({ reservation: changed });
  }

  mintTunnelKey(body: TunnelKeyRequest) {
    return this.#call('mintTunnelKey', this.reservations.get(body.reservationId)?.value ?? '', () => {
      const id = `k${++this.#next}`;
      const tunnelKey: TunnelKey = { id, accountId: 'a', reservationId: body.reservationId, protocol: body.protocol, maxConnections: body.maxConnections ?? 1, expiresAt: 0, labels: body.labels ?? {}, createdAt: 0, rotatedAt: null, revokedAt: null };
      this.keys.set(id, tunnelKey);
      return { tunnelKey, token: `tuna_tk_${id}` };
    });
  }

  revokeTunnelKey(id: string) {
    return this.#call('revokeTunnelKey', id, () => {
      const key = this.keys.get(id);
      if (key === undefined) throw new Error(`no key ${id}`);
      const revoked = { ...key, revokedAt: 1 };
      this.keys.set(id, revoked);
      return { tunnelKey: revoked };
    });
  }

  release(id: string) {
    return this.#call('release', id, () => {
      const reservation = this.reservations.get(id);
      if (reservation === undefined) throw new Error(`no reservation ${id}`);
      this.reservations.delete(id);
      const revokedTunnelKeyIds: string[] = [];
      for (const k of this.keys.values()) if (k.reservationId === id && k.revokedAt === null) (this.keys.set(k.id, { ...k, revokedAt: 1 }), revokedTunnelKeyIds.push(k.id));
      return { reservation, revokedTunnelKeyIds };
    });
  }

  async #call<A>(method: keyof FakeEdgeControl['calls'], arg: string, answer: () => A): Promise<A> {
    this.calls[method]++;
    this.log.push(arg === '' ? method : `${method} ${arg}`);
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      await this.gate?.(method);
      return answer();
    } finally {
      this.inFlight--;
    }
  }
}

/** matches tells whether labels hold every pair of a selector. */
function matches(labels: Readonly<Record<string, string>>, selector: LabelSelector | undefined): boolean {
  return Object.entries(selector ?? {}).every(([k, v]) => labels[k] === v);
}
