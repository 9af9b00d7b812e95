import * as t from 'io-ts';

/**
 * io-ts codecs of the control API's answers (docs/edge-store.md "Control API"): the CLI checks
 * what the edge sends at this boundary, so commands print typed records. Objects are open (an
 * edge newer than this CLI may add fields); `t.type` strips nothing we read.
 */

const labels = t.record(t.string, t.string);
const nullableNumber = t.union([t.number, t.null]);

/** AccountCodec is an account. */
export const AccountCodec = t.type({ id: t.string, name: t.string, createdAt: t.number });
/** Account is a decoded account. */
export type Account = t.TypeOf<typeof AccountCodec>;

/** ApiKeyCodec is an account API key (never its secret). */
export const ApiKeyCodec = t.type({ id: t.string, accountId: t.string, name: t.string, scopes: t.array(t.string), createdAt: t.number, revokedAt: nullableNumber });
/** ApiKey is a decoded API key record. */
export type ApiKey = t.TypeOf<typeof ApiKeyCodec>;

/** ReservationCodec is a reservation: a domain, a TCP port or a dedicated address. */
export const ReservationCodec = t.type({
  id: t.string,
  accountId: t.string,
  kind: t.keyof({ 'domain': null, 'tcp-port': null, 'address': null }),
  value: t.string,
  name: t.union([t.string, t.null]),
  labels,
  domainType: t.union([t.literal('subdomain'), t.literal('custom'), t.null]),
  verificationToken: t.union([t.string, t.null]),
  verified: t.boolean,
  createdAt: t.number,
});
/** Reservation is a decoded reservation. */
export type Reservation = t.TypeOf<typeof ReservationCodec>;

/** TunnelKeyCodec is a tunnel key (never its secret). */
export const TunnelKeyCodec = t.type({
  id: t.string,
  accountId: t.string,
  reservationId: t.string,
  protocol: t.string,
  maxConnections: t.number,
  expiresAt: t.number,
  labels,
  createdAt: t.number,
  revokedAt: nullableNumber,
});
/** TunnelKey is a decoded tunnel key record. */
export type TunnelKey = t.TypeOf<typeof TunnelKeyCodec>;

/** MintedApiKeyAnswer is POST /v1/api-keys: the record and its token, shown once. */
export const MintedApiKeyAnswer = t.type({ apiKey: ApiKeyCodec, token: t.string });
/** ApiKeysAnswer is GET /v1/api-keys. */
export const ApiKeysAnswer = t.type({ apiKeys: t.array(ApiKeyCodec) });
/** ApiKeyAnswer is DELETE /v1/api-keys/{id}. */
export const ApiKeyAnswer = t.type({ apiKey: ApiKeyCodec });
/** MintedTunnelKeyAnswer is POST /v1/tunnel-keys: the record and its token, shown once. */
export const MintedTunnelKeyAnswer = t.type({ tunnelKey: TunnelKeyCodec, token: t.string });
/** TunnelKeysAnswer is GET /v1/tunnel-keys. */
export const TunnelKeysAnswer = t.type({ tunnelKeys: t.array(TunnelKeyCodec) });
/** TunnelKeyAnswer is DELETE /v1/tunnel-keys/{id}. */
export const TunnelKeyAnswer = t.type({ tunnelKey: TunnelKeyCodec });
/** CreatedReservationAnswer is POST /v1/reservations (201 new, 200 adopted). */
export const CreatedReservationAnswer = t.type({ reservation: ReservationCodec, created: t.boolean });
/** ReservationAnswer is POST /v1/reservations/{id}/verify. */
export const ReservationAnswer = t.type({ reservation: ReservationCodec });
/** ReservationsAnswer is GET /v1/reservations. */
export const ReservationsAnswer = t.type({ reservations: t.array(ReservationCodec) });
/** ReleasedAnswer is DELETE /v1/reservations/{id}. */
export const ReleasedAnswer = t.type({ reservation: ReservationCodec, revokedTunnelKeyIds: t.array(t.string) });

/** ErrorAnswer is the control API's error document. */
export const ErrorAnswer = t.type({ error: t.partial({ code: t.string, message: t.string, field: t.string }) });
