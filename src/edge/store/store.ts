/**
 * The edge's persistent state behind one interface: accounts, scoped API keys, address
 * reservations, tunnel keys, ACME certificates and an append-only audit log. Two implementations
 * share one SQL core (src/edge/store/sql-store.ts): SQLite through `node:sqlite` (one edge node,
 * the default) and PostgreSQL through `pg` (several edge nodes sharing state; DESIGN "Scale-out").
 *
 * Every method is async because PostgreSQL is; every mutating method takes the `actor` that is
 * written to the audit log. Secrets (API key and tunnel key tokens, certificate private keys)
 * never reach the audit log; tokens are returned exactly once, by the call that creates them.
 */

import type {
  Account, ApiKey, ApiKeyScope, AuditEvent, AuditQuery, CreatedReservation, DisabledAccount, DomainType, LabelSelector, Labels, PortPool,
  PortSpec, ReleasedReservation, Reservation, ReservationKind, TunnelKey, TunnelProtocol,
} from '../../control-api/index.js';

// The records the store keeps are the control API's records (src/control-api/records.ts): one
// definition, so a row the store returns is exactly what the API answers and the client decodes.
export { API_KEY_SCOPES, PORT_PROTOCOLS, TUNNEL_PROTOCOLS, portTransportOf } from '../../control-api/index.js';
export type {
  Account, ApiKey, ApiKeyScope, AuditEvent, AuditQuery, DomainType, LabelSelector, Labels, PortPool, PortProtocol, PortSpec, Reservation, ReservationKind,
  TunnelKey, TunnelProtocol,
} from '../../control-api/index.js';

/** Actor names who made a change, for the audit log: `apikey:<id>`, `system`, `cli`, ... */
export type Actor = string;

/** ReservationSpec says what to reserve: a specific address, or any free one from a pool. */
export type ReservationSpec =
  | { readonly kind: 'domain'; readonly hostname: string; readonly domainType: DomainType }
  | { readonly kind: 'tcp-port'; readonly port: number }
  | { readonly kind: 'tcp-port'; readonly pool: PortPool }
  | { readonly kind: 'address'; readonly address: string }
  /** pool: an IPv4 CIDR (`127.77.0.0/16`) or an inclusive range (`127.77.0.1-127.77.0.9`) */
  | { readonly kind: 'address'; readonly pool: string };

/** CreateReservationInput is the argument of Store.createReservation. */
export interface CreateReservationInput {
  readonly accountId: string;
  readonly spec: ReservationSpec;
  readonly name?: string;
  readonly labels?: Labels;
  /**
   * address reservations only: the ports the edge opens on the address (absent: the edge's
   * `addressPorts`). On an adopted reservation a list that differs replaces the one held.
   */
  readonly ports?: readonly PortSpec[];
  /** the edge's default quota of held reservations (an account's override wins; absent: none) */
  readonly quota?: number;
}

/** CreateReservationResult tells a new reservation from an adopted one (idempotent create): the API's answer. */
export type CreateReservationResult = CreatedReservation;

/** MintTunnelKeyInput is the argument of Store.mintTunnelKey. */
export interface MintTunnelKeyInput {
  readonly accountId: string;
  readonly reservationId: string;
  readonly protocol: TunnelProtocol;
  readonly maxConnections: number;
  readonly expiresAt: number;
  readonly labels?: Labels;
  /** the edge's default quota of live tunnel keys (an account's override wins; absent: none) */
  readonly quota?: number;
}

/** QuotaName names a per-account quota. */
export type QuotaName = 'reservations' | 'tunnelKeys' | 'concurrentTunnels';

/** CountedQuota is a quota the store counts itself (rows it holds); concurrent tunnels are counted by each edge node. */
export type CountedQuota = Exclude<QuotaName, 'concurrentTunnels'>;

/** QuotaOverrides are an account's own limits; null follows the edge's default. */
export interface QuotaOverrides {
  readonly reservations: number | null;
  readonly tunnelKeys: number | null;
  /** live tunnels opened with the account's `tunnels`-scoped API keys, per edge node */
  readonly concurrentTunnels: number | null;
}

/** RotateTunnelKeyInput is the argument of Store.rotateTunnelKey. */
export interface RotateTunnelKeyInput {
  readonly expiresAt: number;
  /** how long the previous secret stays valid, so replicas can switch without a gap (0: none) */
  readonly graceMs?: number;
}

/** Minted pairs a new record with its token, which is shown exactly once. */
export interface Minted<T> {
  readonly record: T;
  readonly token: string;
}

/** TunnelKeyRejection says why a tunnel key was refused (for the edge's own logs, never the client). */
export type TunnelKeyRejection = 'malformed' | 'unknown' | 'wrong-secret' | 'revoked' | 'expired' | 'account-disabled';

/** TunnelKeyCheck is the result of Store.authenticateTunnelKey. */
export type TunnelKeyCheck =
  | { readonly ok: true; readonly key: TunnelKey }
  | { readonly ok: false; readonly reason: TunnelKeyRejection };

/** Certificate is a PEM chain and private key for one hostname (ACME or static). */
export interface Certificate {
  readonly hostname: string;
  readonly chainPem: string;
  readonly keyPem: string;
  readonly notAfter: number;
  readonly updatedAt: number;
}

/** PutCertificateInput is the argument of Store.putCertificate. */
export type PutCertificateInput = Omit<Certificate, 'updatedAt'>;

/** ReleaseResult lists the tunnel keys revoked with a released reservation (close their tunnels): the API's answer. */
export type ReleaseResult = ReleasedReservation;

/** DisableAccountResult is a disabled account and the keys revoked with it (close their tunnels): the API's answer. */
export type DisableAccountResult = DisabledAccount;

/** ServedReservation is a held reservation with the protocols of its live, unexpired tunnel keys (routing). */
export interface ServedReservation {
  readonly reservation: Reservation;
  readonly protocols: readonly TunnelProtocol[];
}

/** ServedKey is what the binding directory needs of one tunnel key: its reservation, protocol and life. */
export interface ServedKey {
  readonly id: string;
  readonly reservationId: string;
  readonly protocol: TunnelProtocol;
  readonly expiresAt: number;
  /** isLive is false once the key is revoked (directly, by a release or by a disabled account) */
  readonly isLive: boolean;
}

/** ServedChange is one reservation row of the change feed: its current state, and whether it is still held. */
export interface ServedChange {
  readonly reservation: Reservation;
  readonly isHeld: boolean;
}

/** ServedChanges is one read of the change feed of reservations and tunnel keys (Store.listServedChanges). */
export interface ServedChanges {
  /** seq is the feed's position after this read: pass it as `afterSeq` next time */
  readonly seq: number;
  /** now is the store's clock at the read, for judging the keys' expiry */
  readonly now: number;
  /** isFull: this read is a whole snapshot (held reservations, live keys) that replaces the reader's state */
  readonly isFull: boolean;
  readonly reservations: readonly ServedChange[];
  readonly tunnelKeys: readonly ServedKey[];
}

/** Store is the edge's persistent state. */
export interface Store {
  /** dialect names the backend, for logs and docs */
  readonly dialect: 'sqlite' | 'postgres';
  close(): Promise<void>;

  createAccount(input: { name: string }, actor: Actor): Promise<Account>;
  getAccount(id: string): Promise<Account | undefined>;
  listAccounts(): Promise<Account[]>;
  /**
   * disableAccount marks an account disabled and revokes its API keys and tunnel keys (announced as
   * revocations, so every node closes their tunnels); its reservations stay held, so nobody else
   * takes its addresses. Keys of a disabled account never authenticate, and it gets no new keys or
   * reservations. Disabling a disabled account changes nothing.
   */
  disableAccount(id: string, actor: Actor): Promise<DisableAccountResult>;
  /** getQuotaOverrides reads an account's quota overrides (TUNA_STORE_NOT_FOUND for no such account) */
  getQuotaOverrides(accountId: string): Promise<QuotaOverrides>;
  /** setQuotaOverrides changes the overrides given (null: back to the edge's default) */
  setQuotaOverrides(accountId: string, change: Partial<QuotaOverrides>, actor: Actor): Promise<QuotaOverrides>;

  createApiKey(input: { accountId: string; name: string; scopes: readonly ApiKeyScope[] }, actor: Actor): Promise<Minted<ApiKey>>;
  listApiKeys(accountId: string): Promise<ApiKey[]>;
  revokeApiKey(accountId: string, id: string, actor: Actor): Promise<ApiKey>;
  /** authenticateApiKey returns the unrevoked key a token belongs to, or undefined */
  authenticateApiKey(token: string): Promise<ApiKey | undefined>;

  createReservation(input: CreateReservationInput, actor: Actor): Promise<CreateReservationResult>;
  getReservation(accountId: string, id: string): Promise<Reservation | undefined>;
  /** findReservation looks an address up across accounts, for routing public traffic */
  findReservation(kind: ReservationKind, value: string): Promise<Reservation | undefined>;
  listReservations(accountId: string, selector?: LabelSelector): Promise<Reservation[]>;
  /** listServedReservations returns every held reservation of every account, for the edge's binding directory */
  listServedReservations(): Promise<ServedReservation[]>;
  /**
   * listServedChanges reads the change feed (docs/edge-store.md "Change feed"): without `afterSeq`, every held reservation
   * and live, unexpired key; with it, only the reservation and key rows written since, in any state
   * (a released reservation, a revoked key), so a reader follows the store without reloading it.
   */
  listServedChanges(afterSeq?: number): Promise<ServedChanges>;
  markDomainVerified(accountId: string, id: string, actor: Actor): Promise<Reservation>;
  /**
   * setReservationPorts replaces the ports of an address reservation (sorted by port; one protocol
   * a port); the same list again writes nothing. Which ports the edge allows is the control API's rule.
   */
  setReservationPorts(accountId: string, id: string, ports: readonly PortSpec[], actor: Actor): Promise<Reservation>;
  releaseReservation(accountId: string, id: string, actor: Actor): Promise<ReleaseResult>;
  /** releaseUnverifiedDomains releases every held custom domain still unverified that was reserved before `createdBefore` */
  releaseUnverifiedDomains(createdBefore: number, actor: Actor): Promise<ReleaseResult[]>;

  mintTunnelKey(input: MintTunnelKeyInput, actor: Actor): Promise<Minted<TunnelKey>>;
  getTunnelKey(accountId: string, id: string): Promise<TunnelKey | undefined>;
  listTunnelKeys(accountId: string, selector?: LabelSelector): Promise<TunnelKey[]>;
  rotateTunnelKey(accountId: string, id: string, input: RotateTunnelKeyInput, actor: Actor): Promise<Minted<TunnelKey>>;
  revokeTunnelKey(accountId: string, id: string, actor: Actor): Promise<TunnelKey>;
  /** authenticateTunnelKey checks a token's secret, revocation and expiry (binding and cap are the edge's) */
  authenticateTunnelKey(token: string): Promise<TunnelKeyCheck>;
  /**
   * watchTunnelKeyRevocations calls `listener` with the ids of tunnel keys revoked (directly or by a
   * release) once the change commits — on every edge node sharing a PostgreSQL database, in this
   * process for SQLite — so each node closes those keys' live connections. Resolves to an unsubscribe.
   */
  watchTunnelKeyRevocations(listener: (keyIds: readonly string[]) => void): Promise<() => Promise<void>>;

  putCertificate(input: PutCertificateInput, actor: Actor): Promise<Certificate>;
  getCertificate(hostname: string): Promise<Certificate | undefined>;
  /** listCertificates returns certificates, optionally only those expiring before a time (renewal) */
  listCertificates(query?: { notAfterBefore?: number }): Promise<Certificate[]>;
  deleteCertificate(hostname: string, actor: Actor): Promise<void>;

  listAuditEvents(query?: AuditQuery): Promise<AuditEvent[]>;
}

/** Clock gives the store the current time in milliseconds since the epoch (fake in tests). */
export interface Clock {
  now(): number;
}

/** systemClock is the real clock. */
export const systemClock: Clock = { now: () => Date.now() };
