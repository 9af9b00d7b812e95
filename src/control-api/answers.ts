import * as t from 'io-ts';
import { AccountCodec, AccountQuotasCodec, ApiKeyCodec, AuditEventCodec, EdgeInfoCodec, ReservationCodec, TunnelKeyCodec } from './records.js';

/**
 * io-ts codecs of the control API's answer envelopes, one per answer shape. The edge builds its
 * answers with the matching types (so it cannot send a shape the client does not read), and the
 * client decodes with the codecs.
 */

const ids = t.readonlyArray(t.string);

/** EdgeAnswer is GET /v1/edge. */
export const EdgeAnswer = t.type({ edge: EdgeInfoCodec });
/** WhoAmIAnswer is GET /v1/account: the calling key and its account. */
export const WhoAmIAnswer = t.type({ account: t.union([AccountCodec, t.null]), apiKey: ApiKeyCodec });
/** AccountAnswer is POST /v1/accounts (201). */
export const AccountAnswer = t.type({ account: AccountCodec });
/** AccountsAnswer is GET /v1/accounts. */
export const AccountsAnswer = t.type({ accounts: t.readonlyArray(AccountCodec) });
/** DisabledAccountAnswer is POST /v1/accounts/{id}/disable: the account and the keys revoked with it. */
export const DisabledAccountAnswer = t.type({ account: AccountCodec, revokedApiKeyIds: ids, revokedTunnelKeyIds: ids });
/** QuotasAnswer is GET and POST /v1/accounts/{id}/quotas. */
export const QuotasAnswer = t.type({ quotas: AccountQuotasCodec });
/** MintedApiKeyAnswer is POST /v1/api-keys: the record and its token, shown once. */
export const MintedApiKeyAnswer = t.type({ apiKey: ApiKeyCodec, token: t.string });
/** ApiKeysAnswer is GET /v1/api-keys. */
export const ApiKeysAnswer = t.type({ apiKeys: t.readonlyArray(ApiKeyCodec) });
/** ApiKeyAnswer is DELETE /v1/api-keys/{id}. */
export const ApiKeyAnswer = t.type({ apiKey: ApiKeyCodec });
/** AuditAnswer is GET /v1/audit. */
export const AuditAnswer = t.type({ events: t.readonlyArray(AuditEventCodec) });
/** MintedTunnelKeyAnswer is POST /v1/tunnel-keys and POST /v1/tunnel-keys/{id}/rotate: the record and its token, shown once. */
export const MintedTunnelKeyAnswer = t.type({ tunnelKey: TunnelKeyCodec, token: t.string });
/** TunnelKeysAnswer is GET /v1/tunnel-keys. */
export const TunnelKeysAnswer = t.type({ tunnelKeys: t.readonlyArray(TunnelKeyCodec) });
/** TunnelKeyAnswer is GET and DELETE /v1/tunnel-keys/{id}. */
export const TunnelKeyAnswer = t.type({ tunnelKey: TunnelKeyCodec });
/** CreatedReservationAnswer is POST /v1/reservations (201 new, 200 adopted). */
export const CreatedReservationAnswer = t.type({ reservation: ReservationCodec, created: t.boolean });
/** ReservationAnswer is GET /v1/reservations/{id}, POST /v1/reservations/{id}/verify and PUT /v1/reservations/{id}/ports. */
export const ReservationAnswer = t.type({ reservation: ReservationCodec });
/** ReservationsAnswer is GET /v1/reservations. */
export const ReservationsAnswer = t.type({ reservations: t.readonlyArray(ReservationCodec) });
/** ReleasedAnswer is DELETE /v1/reservations/{id}: the reservation and the tunnel keys revoked with it. */
export const ReleasedAnswer = t.type({ reservation: ReservationCodec, revokedTunnelKeyIds: ids });

/** CreatedReservation is a new or adopted reservation (the store's createReservation result). */
export type CreatedReservation = t.TypeOf<typeof CreatedReservationAnswer>;
/** ReleasedReservation is a released reservation and its revoked tunnel keys (the store's releaseReservation result). */
export type ReleasedReservation = t.TypeOf<typeof ReleasedAnswer>;
/** DisabledAccount is a disabled account and its revoked keys (the store's disableAccount result). */
export type DisabledAccount = t.TypeOf<typeof DisabledAccountAnswer>;

/**
 * ErrorAnswer is the control API's error document, `{"error": {code, message, field?}}`. Every
 * member is optional when decoding, so an error page of a proxy in front of the edge still maps
 * onto an error by its HTTP status.
 */
export const ErrorAnswer = t.type({ error: t.partial({ code: t.string, message: t.string, field: t.string }) });
/** ErrorBody is the `error` member of an error answer. */
export type ErrorBody = t.TypeOf<typeof ErrorAnswer>['error'];
