import { ControlAnswerError, ControlPortUnavailableError } from '../control-api/index.js';
import type { PortSpec, Reservation, ReservationRequest } from '../control-api/index.js';
import type { Binding, Listener } from '../model/index.js';
import { isInAddressPool } from '../model/index.js';
import { listenerProblems, planAddressPorts, samePorts, servedPorts, udpOf } from './address-ports.js';
import type { AddressPortLimits, PortProblem } from './address-ports.js';
import type { EdgeControl, EdgeHoldings } from './edge-holdings.js';

/**
 * Address bindings at the edge: a Gateway's dedicated address (`binding/address/<ns>/<name>`) gets
 * an `address` reservation from the edge's pool (the one `spec.addresses` asks for, when it lies in
 * the pool), labelled with the graph's binding id, and a key of its own. The reservation names the
 * ports the Gateway's listeners need (address-ports.ts) where the edge lets it choose them
 * (`addressPortRange`); a change of listeners changes them with one `PUT .../ports`, and a sync
 * that changes nothing asks nothing. Each port the edge cannot open, or reports failed, holds back
 * the listeners on it only (`port` in the pending entry).
 */

/** AddressPending is an address binding, or one port of it (`port`), the edge does not serve, and why. */
export interface AddressPending {
  bindingId: string;
  reason: 'AddressNotAssigned' | 'AddressNotUsable' | 'PortUnavailable' | 'ListenerFailed' | 'ListenerPending';
  message: string;
  /** set for one port of a served address: only the listeners on it are held back */
  port?: number;
  /** with `port`: `udp` holds back only the UDP listeners of that number, absent only the others */
  transport?: 'udp';
}

/** AddressDeps are what holding an address binding needs from the reconciler. */
export interface AddressDeps {
  client: EdgeControl;
  /** the edge's address pool (GET /v1/edge): null: none; undefined: not known, the edge decides */
  addressPool: string | null | undefined;
  /** the ports an address may serve (GET /v1/edge); undefined: not known: no ports are asked for or checked */
  ports: AddressPortLimits | undefined;
  bindingLabel: string;
  ownerLabels: (b: Binding) => Record<string, string>;
  /** forgets the binding's key: an address it held before goes with its reservation (letGo revokes it) */
  forgetKey: (bindingId: string) => void;
  now: () => number;
}

/**
 * REFUSED_RETRY_MS: a port change the edge refused is asked again after this long (or as soon as
 * the edge is listed again): what made it refuse (a port another reservation holds, a range the
 * edge's operator widens) can change without anything in the cluster changing.
 */
export const REFUSED_RETRY_MS = 60_000;

/** HoldKey makes a binding hold a live key of a reservation and marks it ready. */
export type HoldKey = (bindingId: string, reservation: Reservation, labels: Record<string, string>) => Promise<void>;

/** AddressReport is the part of a reconcile's report an address binding adds to. */
export interface AddressReport {
  pending: { push(p: AddressPending): number };
  addresses: Map<string, string>;
  reserved: number;
}

/**
 * reconciles a port of a reservation may stay opening (not reported listening) before the operator
 * stops looking again soon and waits for its slow recheck: an edge that answers from another node
 * than the one serving the address never reports it
 */
const CONFIRM_ATTEMPTS = 20;

/** AddressBindings holds address bindings, remembering across reconciles what the edge refused and which ports it has not opened yet. */
export class AddressBindings {
  readonly #deps: AddressDeps;
  /** port changes the edge refused, by reservation id: not asked again until the edge is listed again or REFUSED_RETRY_MS have passed */
  #refused = new Map<string, { asked: string; message: string; at: number }>();
  /** reservations with a port not listening, and how many reconciles one has been opening */
  #watching = new Map<string, number>();
  #next = new Map<string, number>();

  constructor(deps: AddressDeps) {
    this.#deps = deps;
  }

  /** the binding ids of this reconcile's graph: an address held for one no longer in it is free to take */
  #wanted: ReadonlySet<string> = new Set();

  /** begin starts a reconcile of the graph's bindings `wanted`; `listed`: what the edge holds was just listed, so refused changes are asked again (as are those refused REFUSED_RETRY_MS ago). */
  begin(listed: boolean, wanted: ReadonlySet<string>): void {
    if (listed) this.#refused.clear();
    const now = this.#deps.now();
    for (const [id, r] of this.#refused) if (now - r.at >= REFUSED_RETRY_MS) this.#refused.delete(id);
    this.#next = new Map();
    this.#wanted = wanted;
  }

  /** end closes a reconcile; one that did not look at every binding keeps what the others were waiting for. */
  end(complete: boolean): void {
    this.#watching = complete ? this.#next : new Map([...this.#watching, ...this.#next]);
  }

  /** isWatching tells whether a port waits to be opened or failed: what the edge holds is then listed again at each reconcile. */
  isWatching(): boolean {
    return this.#watching.size > 0;
  }

  /** hasRefused tells whether the edge refused a port change that will be asked again: the caller reconciles again after REFUSED_RETRY_MS. */
  hasRefused(): boolean {
    return this.#refused.size > 0;
  }

  /** isConfirming tells whether a port was just asked for and not reported yet: the caller looks again soon. */
  isConfirming(): boolean {
    for (const n of this.#next.values()) if (n <= CONFIRM_ATTEMPTS) return true;
    return false;
  }

  /** hold makes an address binding hold its reservation, with the ports its listeners need, and a key (`holdKey` mints one where needed and marks the binding ready). */
  async hold(edge: EdgeHoldings, b: Binding, listeners: readonly Listener[], wantedReservations: Set<string>, report: AddressReport, holdKey: HoldKey): Promise<void> {
    const requested = b.addresses?.[0];
    // the edge would hand a held address over to this binding: one another Gateway of the graph holds stays with it
    const held = requested === undefined ? undefined : edge.addressHolder(requested, b.id);
    const holder = held !== undefined && this.#wanted.has(held) ? held : undefined;
    const unusable = this.#unusable(b.addresses ?? []) ?? (holder === undefined ? undefined : `spec.addresses ${requested} is not usable: ${holder} holds it`);
    if (unusable !== undefined) {
      report.pending.push({ bindingId: b.id, reason: 'AddressNotUsable', message: unusable });
      this.#deps.forgetKey(b.id);
      return;
    }
    const limits = this.#deps.ports;
    const plan = limits === undefined ? undefined : planAddressPorts(listeners, limits);
    // ports are named only where the edge lets the address choose them: an older edge's closed codec refuses the field
    const asked = limits?.range != null ? plan?.asked : undefined;
    let reservation = edge.address(b.id, requested);
    let before: readonly PortSpec[] = [];
    if (reservation === undefined) {
      const reserved = await this.#reserve(b, requested, asked);
      if ('pending' in reserved) {
        this.#deps.forgetKey(b.id);
        report.pending.push(reserved.pending);
        return;
      }
      reservation = reserved.reservation;
      edge.addReservation(reservation);
      report.reserved++;
    } else if (asked !== undefined && limits !== undefined) {
      before = servedPorts(reservation, limits);
      reservation = await this.#setPorts(edge, reservation, asked, before);
    } else if (limits !== undefined) {
      before = servedPorts(reservation, limits);
    }
    wantedReservations.add(reservation.id);
    await holdKey(b.id, reservation, this.#deps.ownerLabels(b));
    report.addresses.set(b.id, reservation.value);
    if (plan !== undefined && limits !== undefined) this.#checkPorts(b, reservation, plan.unavailable, plan.asked, before, limits, report);
  }

  /** reserve asks for an address (the one requested, or any of the pool) serving `ports` (when named). */
  async #reserve(b: Binding, requested: string | undefined, ports: readonly PortSpec[] | undefined): Promise<{ reservation: Reservation } | { pending: AddressPending }> {
    const labels = { ...this.#deps.ownerLabels(b), [this.#deps.bindingLabel]: b.id };
    const body: ReservationRequest = { kind: 'address', ...(requested !== undefined ? { address: requested } : {}), labels };
    try {
      return { reservation: (await this.#deps.client.reserve({ ...body, ...(ports !== undefined ? { ports: [...ports] } : {}) })).reservation };
    } catch (err) {
      let failure = err;
      // a port the edge will not open must not cost the Gateway its address: reserve without, and say which ports are not served
      if (err instanceof ControlPortUnavailableError && ports !== undefined) {
        try {
          const { reservation } = await this.#deps.client.reserve({ ...body, ports: [] });
          this.#refused.set(reservation.id, { asked: JSON.stringify(ports), message: err.message, at: this.#deps.now() });
          return { reservation };
        } catch (again) {
          failure = again;
        }
      }
      const why = (failure as Error).message;
      return {
        pending:
          requested === undefined
            ? { bindingId: b.id, reason: 'AddressNotAssigned', message: `the edge has assigned no address: it refused to reserve one from its pool: ${why}` }
            : { bindingId: b.id, reason: 'AddressNotUsable', message: `spec.addresses ${requested} is not usable: the edge refused to reserve it: ${why}` },
      };
    }
  }

  /**
   * setPorts makes the reservation name `asked` when it names other ports (nothing is called when
   * they are equal). A refusal (a 4xx) keeps the ports it had, and is not asked again until the
   * edge is listed again or REFUSED_RETRY_MS have passed; a transient failure (unreachable, 5xx) is thrown: the sync is retried.
   */
  async #setPorts(edge: EdgeHoldings, reservation: Reservation, asked: readonly PortSpec[], before: readonly PortSpec[]): Promise<Reservation> {
    if (samePorts(before, asked)) return reservation;
    const key = JSON.stringify(asked);
    if (this.#refused.get(reservation.id)?.asked === key) return reservation;
    try {
      const { reservation: changed } = await this.#deps.client.setReservationPorts(reservation.id, asked);
      // the answer's listeners are the ones before the change: the new ports are looked at on the next reconcile
      const { status: _stale, ...rest } = changed;
      edge.updateReservation(rest);
      this.#refused.delete(reservation.id);
      return rest;
    } catch (err) {
      if (!(err instanceof ControlAnswerError) || err.status >= 500 || err.status === 429) throw err;
      this.#refused.set(reservation.id, { asked: key, message: err.message, at: this.#deps.now() });
      return reservation;
    }
  }

  /**
   * checkPorts reports each port of the binding the edge does not serve: not askable, refused,
   * failed to listen, or not opened yet (a port just asked for is opening until the edge is listed
   * again and reports it listening).
   */
  #checkPorts(b: Binding, reservation: Reservation, unavailable: readonly PortProblem[], asked: readonly PortSpec[], before: readonly PortSpec[], limits: AddressPortLimits, report: AddressReport): void {
    const served = servedPorts(reservation, limits);
    const has = (list: readonly PortSpec[], p: PortSpec): boolean => list.some((q) => q.port === p.port && q.protocol === p.protocol);
    const refused = this.#refused.get(reservation.id);
    const problems = [...unavailable];
    for (const p of asked) {
      if (has(served, p)) continue;
      const why = refused === undefined ? 'the edge does not serve it on this address' : `the edge refused it: ${refused.message}`;
      problems.push({ port: p.port, ...udpOf(p), state: 'unavailable', message: `port ${p.port} is not available: ${why}` });
    }
    const isFresh = (p: PortSpec): boolean => !has(before, p);
    problems.push(...listenerProblems(reservation, asked.filter((p) => has(served, p)), isFresh));
    const reasons = { unavailable: 'PortUnavailable', failed: 'ListenerFailed', opening: 'ListenerPending' } as const;
    for (const p of problems.sort((x, y) => x.port - y.port)) report.pending.push({ bindingId: b.id, reason: reasons[p.state], message: p.message, port: p.port, ...(p.transport ? { transport: p.transport } : {}) });
    const waiting = problems.filter((p) => p.state !== 'unavailable');
    if (waiting.length === 0) return;
    const opening = waiting.some((p) => p.state === 'opening');
    this.#next.set(reservation.id, opening ? (this.#watching.get(reservation.id) ?? 0) + 1 : CONFIRM_ATTEMPTS + 1);
  }

  /** unusable says why the addresses a binding asks for cannot be asked of the edge (undefined: they can). */
  #unusable(requested: readonly string[]): string | undefined {
    if (requested.length > 1) return `spec.addresses asks for ${requested.length} addresses (${requested.join(', ')}): the edge gives a Gateway one address`;
    const ip = requested[0];
    const pool = this.#deps.addressPool;
    if (ip === undefined || pool === undefined) return undefined;
    if (pool === null) return `spec.addresses ${ip} is not usable: the edge has no address pool`;
    if (!isInAddressPool(pool, ip)) return `spec.addresses ${ip} is not usable: it is not in the edge's address pool ${pool}`;
    return undefined;
  }
}
