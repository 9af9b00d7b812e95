import { parseToken } from '../store/index.js';
import type { Reservation, ReservationKind, Store, TunnelKeyRejection } from '../store/index.js';
import type { Grant, Refusal, TunnelAuthority, TunnelRequestInfo } from '../tunnels/index.js';
import { bindingIdForReservation, protocolFitsBinding } from './reservation-bindings.js';
import type { StoreBindingDirectory } from './store-directory.js';

/** TunnelAuthorityStore is the store as the tunnel authority reads it at accept time: only what it uses (docs/architecture.md, narrow interfaces). */
export type TunnelAuthorityStore = Pick<Store, 'authenticateApiKey' | 'authenticateTunnelKey' | 'findReservation' | 'getQuotaOverrides' | 'getReservation'>;

/** API_KEY_GRANT_PREFIX marks grants made to an account API key (scope `tunnels`) rather than a tunnel key. */
export const API_KEY_GRANT_PREFIX = 'apikey:';

/** ACCOUNT_CAP_PREFIX names the one connection cap all `tunnels` API keys of an account share (Grant.capId). */
export const ACCOUNT_CAP_PREFIX = 'account:';

const REJECTION: Record<TunnelKeyRejection, Refusal> = {
  'malformed': { ok: false, status: 403, reason: 'unknown-key' },
  'unknown': { ok: false, status: 403, reason: 'unknown-key' },
  'wrong-secret': { ok: false, status: 403, reason: 'unknown-key' },
  'revoked': { ok: false, status: 403, reason: 'revoked' },
  'expired': { ok: false, status: 403, reason: 'expired' },
  'account-disabled': { ok: false, status: 403, reason: 'revoked' },
};

const WRONG_BINDING: Refusal = { ok: false, status: 403, reason: 'wrong-binding' };

const KIND_OF_SEGMENT: Record<string, ReservationKind> = { 'host': 'domain', 'tcp-port': 'tcp-port', 'address': 'address' };

/**
 * StoreTunnelAuthority checks tunnel keys against the store at accept time (docs/edge.md,
 * "Enforcement"): the key is valid, unexpired and unrevoked (`authenticateTunnelKey`), the
 * binding asked for is the one of the key's held reservation, and the key's protocol can be served
 * there (a domain key never opens a TCP port). The connection cap is the acceptor's, atomic per
 * edge process (TunnelRegistry.claim).
 *
 * An account API key with scope `tunnels` (DESIGN "Keys and trust": the CLI's key) may start any
 * tunnel of its account; all such keys of an account share one cap of live tunnels per edge node
 * (the `concurrentTunnels` quota, an admin's override or `defaultConcurrentTunnels`).
 * `reservations`-only keys are refused like unknown keys.
 * Every refusal is a 403 with one body: the reason goes to the edge's log and metrics only.
 */
export class StoreTunnelAuthority implements TunnelAuthority {
  readonly #store: TunnelAuthorityStore;
  readonly #directory: StoreBindingDirectory;
  readonly #defaultConcurrentTunnels: number;

  constructor(store: TunnelAuthorityStore, directory: StoreBindingDirectory, defaultConcurrentTunnels: number) {
    this.#store = store;
    this.#directory = directory;
    this.#defaultConcurrentTunnels = defaultConcurrentTunnels;
  }

  async authorize(token: string, request: TunnelRequestInfo): Promise<Grant | Refusal> {
    if (token.startsWith('tuna_ak_')) return this.#authorizeApiKey(token, request);
    const check = await this.#store.authenticateTunnelKey(token);
    if (!check.ok) return REJECTION[check.reason];
    const { key } = check;
    const reservation = await this.#store.getReservation(key.accountId, key.reservationId);
    if (reservation === undefined || !isServable(reservation) || bindingIdForReservation(reservation) !== request.bindingId) {
      return WRONG_BINDING;
    }
    const kind = reservation.kind === 'domain' ? 'host' : reservation.kind;
    if (!protocolFitsBinding(key.protocol, { kind })) return { ok: false, status: 403, reason: 'wrong-protocol' };
    await this.#ensureKnown(request.bindingId);
    return { ok: true, bindingId: request.bindingId, keyId: key.id, accountId: key.accountId, maxConnections: key.maxConnections, expiresAt: key.expiresAt };
  }

  async #authorizeApiKey(token: string, request: TunnelRequestInfo): Promise<Grant | Refusal> {
    if (parseToken('api', token) === undefined) return REJECTION.malformed;
    const apiKey = await this.#store.authenticateApiKey(token);
    if (apiKey === undefined || !apiKey.scopes.includes('tunnels')) return REJECTION.unknown;
    const target = parseBindingId(request.bindingId);
    const reservation = target && (await this.#store.findReservation(target.kind, target.value));
    if (!reservation || reservation.accountId !== apiKey.accountId || !isServable(reservation)) return WRONG_BINDING;
    await this.#ensureKnown(request.bindingId);
    const cap = (await this.#store.getQuotaOverrides(apiKey.accountId)).concurrentTunnels ?? this.#defaultConcurrentTunnels;
    const keyId = `${API_KEY_GRANT_PREFIX}${apiKey.id}`;
    return { ok: true, bindingId: request.bindingId, keyId, accountId: apiKey.accountId, maxConnections: cap, capId: `${ACCOUNT_CAP_PREFIX}${apiKey.accountId}` };
  }

  // A reservation made a moment ago through another node may not have reached this node's
  // directory yet (it polls): read it now rather than refuse the agent.
  async #ensureKnown(bindingId: string): Promise<void> {
    if (this.#directory.byId(bindingId) === undefined) await this.#directory.refresh();
  }
}

function isServable(reservation: Reservation): boolean {
  return reservation.kind !== 'domain' || reservation.verified;
}

/** parseBindingId reverses bindingIdForReservation. */
function parseBindingId(bindingId: string): { kind: ReservationKind; value: string } | undefined {
  const match = /^binding\/(host|tcp-port|address)\/([^/]+)$/.exec(bindingId);
  const kind = match && KIND_OF_SEGMENT[match[1]!];
  return kind ? { kind, value: match[2]! } : undefined;
}
