import {
  ControlDomainUnverifiedError,
  ControlInvalidRequestError,
  ControlNotFoundError,
  CreateReservationBody,
  CreatedReservationAnswer,
  ReleasedAnswer,
  ReservationAnswer,
  ReservationsAnswer,
  SetReservationPorts,
  decodeRequest,
  parseSelector,
} from '../../control-api/index.js';
import type { DomainType, PortPool, PortSpec, Reservation, ReservationRequest, ReservationStatus } from '../../control-api/index.js';
import type { ReservationSpec } from '../store/index.js';
import { checkAddressPorts } from './address-ports.js';
import type { AddressPortRules } from './address-ports.js';
import type { DomainVerifier } from './dns-verifier.js';
import { checkAddressInPool, checkPortInPool } from './reservation-pools.js';
import { answer } from './routes.js';
import type { Route, RouteDeps } from './routes.js';

/** ReservationRouteOptions are the edge's address settings (DESIGN "Addresses"). */
export interface ReservationRouteOptions extends AddressPortRules {
  /** the edge's base domain: `<name>.<baseDomain>` is a subdomain, anything else a custom domain */
  readonly baseDomain: string;
  /** the TCP port pool for allocations without a port */
  readonly portPool?: PortPool;
  /** the IPv4 pool (CIDR or range) for dedicated addresses without an address */
  readonly addressPool?: string;
  /** the bound ports of the edge's own listeners, never reservable (read per request) */
  readonly ownPorts?: () => readonly number[];
  /** what this node does with a reservation now (its listeners), added to GET answers */
  readonly listenerStatus?: (reservation: Reservation) => ReservationStatus | undefined;
  readonly verifyDomain: DomainVerifier;
  /** held reservations per account unless an admin overrode it */
  readonly quota?: number;
}

/**
 * domainType says whether a hostname is a subdomain of the base domain or a custom domain. A
 * wildcard `*.D` is typed as D is: `*.name.<base>` is a subdomain wildcard, `*.<base>` (every
 * tenant's names) is refused; the store then requires D held, and verified, by the same account.
 */
function domainType(hostname: string, baseDomain: string): DomainType {
  const isWildcard = hostname.startsWith('*.');
  const host = (isWildcard ? hostname.slice(2) : hostname).toLowerCase().replace(/\.$/, '');
  const base = baseDomain.toLowerCase();
  if (host === base) throw new ControlInvalidRequestError(isWildcard ? `*.${base} would take every tenant's names; reserve *.<name>.${base}` : 'the base domain itself cannot be reserved', 'hostname');
  if (!host.endsWith(`.${base}`)) return 'custom';
  // One label under the base domain, so the edge's wildcard certificate (*.base) covers it.
  if (host.slice(0, -base.length - 1).includes('.')) {
    throw new ControlInvalidRequestError(`a subdomain of ${base} must be a single label (<name>.${base})`, 'hostname');
  }
  return 'subdomain';
}

/** toSpec turns a POST body into what the store reserves, and the ports an address asks for (checked). */
function toSpec(body: ReservationRequest, options: ReservationRouteOptions): { spec: ReservationSpec; ports?: readonly PortSpec[] } {
  if (body.ports !== undefined && body.kind !== 'address') {
    throw new ControlInvalidRequestError(`ports apply to address reservations only, not kind ${body.kind}`, 'ports');
  }
  const spec = toTarget(body, options);
  if (body.ports === undefined || spec.kind !== 'address') return { spec };
  return { spec, ports: checkAddressPorts(body.ports, 'address' in spec ? { address: spec.address } : { pool: spec.pool }, options) };
}

function toTarget(body: ReservationRequest, options: ReservationRouteOptions): ReservationSpec {
  const need = (field: string) => new ControlInvalidRequestError(`${field} is required for kind ${body.kind}`, field);
  switch (body.kind) {
    case 'domain':
      if (body.hostname === undefined) throw need('hostname');
      return { kind: 'domain', hostname: body.hostname, domainType: domainType(body.hostname, options.baseDomain) };
    case 'tcp-port':
      if (body.port !== undefined) return { kind: 'tcp-port', port: checkPortInPool(body.port, options) };
      if (!options.portPool) throw need('port');
      return { kind: 'tcp-port', pool: options.portPool };
    case 'address':
      if (body.address !== undefined) return { kind: 'address', address: checkAddressInPool(body.address, options) };
      if (!options.addressPool) throw need('address');
      return { kind: 'address', pool: options.addressPool };
  }
}

// A listener that failed to bind shows on its reservation, with the retry.
function withStatus(reservation: Reservation, options: ReservationRouteOptions): Reservation {
  const status = options.listenerStatus?.(reservation);
  return status === undefined ? reservation : { ...reservation, status };
}

/** reservationRoutes returns the routes under /v1/reservations (scope `reservations`). */
export function reservationRoutes({ store, notifyRevoked }: RouteDeps, options: ReservationRouteOptions): Route[] {
  return [
    {
      method: 'POST',
      path: /^\/v1\/reservations$/,
      scope: 'reservations',
      handle: async (ctx) => {
        const body = decodeRequest(CreateReservationBody, await ctx.body());
        const input = { accountId: ctx.key.accountId, ...toSpec(body, options), name: body.name, labels: body.labels, quota: options.quota };
        const { reservation, created } = await store.createReservation(input, ctx.actor);
        return answer(CreatedReservationAnswer, { reservation, created }, created ? 201 : 200);
      },
    },
    {
      method: 'GET',
      path: /^\/v1\/reservations$/,
      scope: 'reservations',
      handle: async (ctx) => {
        const reservations = await store.listReservations(ctx.key.accountId, parseSelector(ctx.query));
        return answer(ReservationsAnswer, { reservations: reservations.map((r) => withStatus(r, options)) });
      },
    },
    {
      method: 'GET',
      path: /^\/v1\/reservations\/([^/]+)$/,
      scope: 'reservations',
      handle: async (ctx) => {
        const reservation = await store.getReservation(ctx.key.accountId, ctx.params[0] ?? '');
        if (!reservation) throw new ControlNotFoundError('reservation not found');
        return answer(ReservationAnswer, { reservation: withStatus(reservation, options) });
      },
    },
    {
      method: 'DELETE',
      path: /^\/v1\/reservations\/([^/]+)$/,
      scope: 'reservations',
      handle: async (ctx) => {
        const result = await store.releaseReservation(ctx.key.accountId, ctx.params[0] ?? '', ctx.actor);
        if (result.revokedTunnelKeyIds.length) notifyRevoked(result.revokedTunnelKeyIds);
        return answer(ReleasedAnswer, result);
      },
    },
    {
      // The answer carries no status: the listeners change once every node has read the change.
      method: 'PUT',
      path: /^\/v1\/reservations\/([^/]+)\/ports$/,
      scope: 'reservations',
      handle: async (ctx) => {
        const body = decodeRequest(SetReservationPorts, await ctx.body());
        const reservation = await store.getReservation(ctx.key.accountId, ctx.params[0] ?? '');
        if (!reservation) throw new ControlNotFoundError('reservation not found');
        if (reservation.kind !== 'address') throw new ControlInvalidRequestError(`ports apply to address reservations only, not kind ${reservation.kind}`, 'ports');
        const ports = checkAddressPorts(body.ports, { address: reservation.value }, options);
        return answer(ReservationAnswer, { reservation: await store.setReservationPorts(ctx.key.accountId, reservation.id, ports, ctx.actor) });
      },
    },
    {
      method: 'POST',
      path: /^\/v1\/reservations\/([^/]+)\/verify$/,
      scope: 'reservations',
      handle: async (ctx) => {
        const reservation = await store.getReservation(ctx.key.accountId, ctx.params[0] ?? '');
        if (!reservation || reservation.kind !== 'domain') throw new ControlNotFoundError('domain reservation not found');
        if (reservation.verified) return answer(ReservationAnswer, { reservation });
        const isVerified = await options.verifyDomain(reservation.value, reservation.verificationToken ?? '');
        if (!isVerified) {
          throw new ControlDomainUnverifiedError(`no TXT record _tuna-challenge.${reservation.value} holding the verification token yet`);
        }
        return answer(ReservationAnswer, { reservation: await store.markDomainVerified(ctx.key.accountId, reservation.id, ctx.actor) });
      },
    },
  ];
}
