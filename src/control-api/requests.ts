import * as t from 'io-ts';
import { closedObject, decodeWith } from '../codec/index.js';
import { ControlInvalidRequestError } from './errors.js';
import { ApiKeyScopeCodec, LabelsCodec, PortProtocolCodec, ReservationKindCodec, TunnelProtocolCodec } from './records.js';

/**
 * io-ts codecs of the control API's request bodies (STYLE: io-ts at every boundary). The edge
 * decodes with them; the client's request types are derived from them, so both ends agree on one
 * shape. Objects are closed: an unknown field is a 400 naming it, so a typo (`lables`) is never
 * silently ignored.
 */

const integer = (name: string, isAllowed: (n: number) => boolean) => t.refinement(t.number, (n) => Number.isInteger(n) && isAllowed(n), name);
const anyInteger = integer('integer', () => true);
const positiveInteger = integer('positive integer', (n) => n > 0);
const nonNegativeInteger = integer('non-negative integer', (n) => n >= 0);
/** a TCP/UDP port number (RFC 793 §3.1: 16 bits; 0 is not a port a client can reach) */
const portNumber = integer('port number (an integer 1-65535)', (n) => n >= 1 && n <= 65535);

/**
 * PortSpecBody is one port an address reservation asks the edge to open and its public protocol.
 * Which ports the edge allows (its `addressPortRange`, one protocol a port) the edge checks.
 */
export const PortSpecBody = closedObject('PortSpec', { port: portNumber, protocol: PortProtocolCodec }, {});
/** PortSpecRequest is one port of an address reservation's request. */
export type PortSpecRequest = t.TypeOf<typeof PortSpecBody>;

/** CreateAccountBody is POST /v1/accounts. */
export const CreateAccountBody = closedObject('CreateAccount', { name: t.string }, {});
/** CreateAccountRequest is the body of POST /v1/accounts. */
export type CreateAccountRequest = t.TypeOf<typeof CreateAccountBody>;

/**
 * SetQuotasBody is POST /v1/accounts/{id}/quotas: a limit per quota to override, and `reset` for the
 * quotas that go back to the edge's default (null counts as absent in these bodies, so it cannot mean "reset").
 */
export const SetQuotasBody = closedObject(
  'SetQuotas',
  {},
  {
    reservations: nonNegativeInteger,
    tunnelKeys: nonNegativeInteger,
    concurrentTunnels: nonNegativeInteger,
    reset: t.array(t.keyof({ reservations: null, tunnelKeys: null, concurrentTunnels: null })),
  },
);
/** SetQuotasRequest is the body of POST /v1/accounts/{id}/quotas. */
export type SetQuotasRequest = t.TypeOf<typeof SetQuotasBody>;

/** CreateApiKeyBody is POST /v1/api-keys (accountId: admins creating a key for another account). */
export const CreateApiKeyBody = closedObject('CreateApiKey', { name: t.string, scopes: t.array(ApiKeyScopeCodec) }, { accountId: t.string });
/** CreateApiKeyRequest is the body of POST /v1/api-keys. */
export type CreateApiKeyRequest = t.TypeOf<typeof CreateApiKeyBody>;

/**
 * CreateReservationBody is POST /v1/reservations: port/address absent means "allocate from the pool";
 * `ports` (address kind only) the ports the edge opens on the address, absent its `addressPorts`.
 */
export const CreateReservationBody = closedObject(
  'CreateReservation',
  { kind: ReservationKindCodec },
  { hostname: t.string, port: anyInteger, address: t.string, name: t.string, labels: LabelsCodec, ports: t.array(PortSpecBody) },
);
/** ReservationRequest is the body of POST /v1/reservations. */
export type ReservationRequest = t.TypeOf<typeof CreateReservationBody>;

/** SetReservationPorts is PUT /v1/reservations/{id}/ports: every port the address serves from now on. */
export const SetReservationPorts = closedObject('SetReservationPorts', { ports: t.array(PortSpecBody) }, {});
/** SetReservationPortsRequest is the body of PUT /v1/reservations/{id}/ports. */
export type SetReservationPortsRequest = t.TypeOf<typeof SetReservationPorts>;

/** MintTunnelKeyBody is POST /v1/tunnel-keys. */
export const MintTunnelKeyBody = closedObject(
  'MintTunnelKey',
  { reservationId: t.string, protocol: TunnelProtocolCodec },
  { maxConnections: positiveInteger, ttlSeconds: positiveInteger, labels: LabelsCodec },
);
/** TunnelKeyRequest is the body of POST /v1/tunnel-keys. */
export type TunnelKeyRequest = t.TypeOf<typeof MintTunnelKeyBody>;

/** RotateTunnelKeyBody is POST /v1/tunnel-keys/{id}/rotate. */
export const RotateTunnelKeyBody = closedObject('RotateTunnelKey', {}, { ttlSeconds: positiveInteger, graceSeconds: nonNegativeInteger });
/** RotateTunnelKeyRequest is the body of POST /v1/tunnel-keys/{id}/rotate. */
export type RotateTunnelKeyRequest = t.TypeOf<typeof RotateTunnelKeyBody>;

/** decodeRequest decodes a body or throws a 400 naming the first offending field. */
export function decodeRequest<A>(codec: t.Decoder<unknown, A>, body: unknown): A {
  const result = decodeWith(codec, body);
  if (result.ok) return result.value;
  const first = result.errors[0] ?? 'invalid request body';
  const cut = first.indexOf(': ');
  throw new ControlInvalidRequestError(first, cut > 0 ? first.slice(0, cut) : 'body');
}
