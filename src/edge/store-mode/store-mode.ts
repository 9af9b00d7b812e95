import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ListenerStatus, Reservation, ReservationStatus } from '../../control-api/index.js';
import { DEFAULT_QUOTAS, DEFAULT_UNVERIFIED_DOMAIN_DAYS, UnverifiedDomainExpiry, createControlApi } from '../control/index.js';
import type { ControlApi, OwnListener, PublicListeners } from '../control/index.js';
import { openStore, storeBackendOf, systemClock } from '../store/index.js';
import type { Store } from '../store/index.js';
import type { Grant, TunnelRegistry } from '../tunnels/index.js';
import type { EdgeWorker } from '../../wire/index.js';
import type { EdgePeers } from '../edge-peers.js';
import type { EdgeConfigFile, EdgeStoreConfig } from '../config.js';
import { EdgeConfigError } from '../errors.js';
import { TunnelKeyEnforcer } from './key-enforcer.js';
import { DEFAULT_ADDRESS_PORTS, bindingIdForReservation } from './reservation-bindings.js';
import { StoreTunnelAuthority } from './store-authority.js';
import { StoreBindingDirectory } from './store-directory.js';

/** StoreOpener opens the store a config's `store` section names (the edge then owns and closes it). */
export type StoreOpener = (settings: EdgeStoreConfig) => Promise<Store>;

/** StoreModeOptions lets a caller hand in a store it opened (the CLI), or how to open one, instead of the config's URL. */
export interface StoreModeOptions {
  /** an open store; the edge does not close it */
  store?: Store;
  /** how to open `config.store` when no store is handed in (default: openConfiguredStore) */
  openStore?: StoreOpener;
  log?: (line: string) => void;
  /** the bound public HTTP/HTTPS ports, for GET /v1/edge (read per request: they are bound later) */
  publicListeners?: () => PublicListeners;
  /** the bound ports of the edge's own listeners, which no reservation may take */
  ownPorts?: () => readonly number[];
  /** the same listeners with their bound hosts (which ports an address reservation may not ask for) */
  ownListeners?: () => readonly OwnListener[];
  /** the listeners a binding needs on this node, open or failed (a reservation's status in GET answers) */
  listenerStatus?: (bindingId: string) => readonly ListenerStatus[];
  /** one worker of several (`tuna edge --workers N`): sweeps that write (unverified-domain expiry) run in worker 0 only */
  worker?: EdgeWorker;
  /** the node's other workers: told after a control API change here, and heard to re-read the store at once */
  peers?: EdgePeers;
}

/** StoreMode is everything the edge needs to run from the store: what EdgeServer takes, and a lifecycle. */
export interface StoreMode {
  readonly store: Store;
  readonly authority: StoreTunnelAuthority;
  readonly directory: StoreBindingDirectory;
  /** serves `/v1` (the control API) on the tunnel listener */
  readonly requestHandler: (req: IncomingMessage, res: ServerResponse) => boolean;
  /** the acceptor reports each registered tunnel's grant */
  readonly onGranted: (grant: Grant) => void;
  /** start begins enforcing revocation and expiry on the edge's registry */
  start(registry: TunnelRegistry): Promise<void>;
  close(): Promise<void>;
}

/**
 * openStoreMode opens the store named by `config.store.url` (or takes `options.store`), loads the
 * binding directory from the reservations, and builds the control API. The caller passes the
 * pieces to EdgeServer and calls `start(edge.registry)` once it listens.
 */
export async function openStoreMode(config: EdgeConfigFile, options: StoreModeOptions = {}): Promise<StoreMode> {
  const settings = config.store;
  if (settings === undefined && options.store === undefined) throw new EdgeConfigError('store mode needs `store.url` in the edge config');
  const log = options.log ?? (() => undefined);
  const store = options.store ?? (await (options.openStore ?? openConfiguredStore)(settings!));
  const ownsStore = options.store === undefined;
  const addressPorts = settings?.addressPorts ?? DEFAULT_ADDRESS_PORTS;
  const directory = new StoreBindingDirectory({
    store,
    addressPorts,
    ...(settings?.pollMs !== undefined ? { pollMs: settings.pollMs } : {}),
    log,
  });
  try {
    await directory.start();
  } catch (err) {
    directory.stop();
    if (ownsStore) await store.close();
    throw err;
  }
  let enforcer: TunnelKeyEnforcer | undefined;
  let unsubscribe: (() => void) | undefined;
  const control = createControlApi({
    store,
    baseDomain: settings?.baseDomain ?? 'localhost',
    ...(settings?.portPool !== undefined ? { portPool: settings.portPool } : {}),
    ...(settings?.addressPool !== undefined ? { addressPool: settings.addressPool } : {}),
    ...(settings?.dnsServers !== undefined ? { dnsServers: settings.dnsServers } : {}),
    addressPorts,
    ...(settings?.addressPortRange !== undefined ? { addressPortRange: settings.addressPortRange } : {}),
    ...(options.ownListeners !== undefined ? { ownListeners: options.ownListeners } : {}),
    ...(options.publicListeners !== undefined ? { publicListeners: options.publicListeners } : {}),
    ...(options.ownPorts !== undefined ? { ownPorts: options.ownPorts } : {}),
    ...(options.listenerStatus !== undefined ? { listenerStatus: listenerStatusOf(options.listenerStatus) } : {}),
    ...(settings?.quotas !== undefined ? { quotas: settings.quotas } : {}),
    onTunnelKeysRevoked: (ids) => enforcer?.closeKeys(ids, 'revoked'),
    log,
  });
  const days = settings?.unverifiedDomainDays ?? DEFAULT_UNVERIFIED_DOMAIN_DAYS;
  const expiry = new UnverifiedDomainExpiry({ store, clock: systemClock, days, onRevoked: (ids) => enforcer?.closeKeys(ids, 'revoked'), log });
  return {
    store,
    authority: new StoreTunnelAuthority(store, directory, settings?.quotas?.concurrentTunnels ?? DEFAULT_QUOTAS.concurrentTunnels),
    directory,
    requestHandler: (req, res) => mountControlApi(control, directory, req, res, () => options.peers?.announce()),
    onGranted: (grant) => enforcer?.track(grant),
    async start(registry) {
      enforcer = new TunnelKeyEnforcer({ store, registry, keyFeed: directory, log });
      await enforcer.start();
      // Written once per node: worker 0 runs the expiry sweep (docs/edge.md, "Workers").
      if ((options.worker?.index ?? 0) === 0) await expiry.start();
      options.peers?.onAnnounce(() => void directory.refresh().catch(() => undefined));
      // A released reservation revokes its tunnel keys (closing their tunnels), but tunnels opened
      // with a `tunnels` API key have no key to revoke: they go when their binding does.
      unsubscribe = directory.subscribe(() => closeOrphans(registry, directory, log));
    },
    async close() {
      expiry.stop();
      unsubscribe?.();
      directory.stop();
      await enforcer?.stop();
      if (ownsStore) await store.close();
    },
  };
}

// Domains share the HTTP/HTTPS listeners: only tcp-port and address reservations have their own.
function listenerStatusOf(byBinding: (bindingId: string) => readonly ListenerStatus[]): (reservation: Reservation) => ReservationStatus | undefined {
  return (reservation) => (reservation.kind === 'domain' ? undefined : { listeners: byBinding(bindingIdForReservation(reservation)) });
}

function closeOrphans(registry: TunnelRegistry, directory: StoreBindingDirectory, log: (line: string) => void): void {
  const orphans = registry.all().filter((t) => directory.byId(t.bindingId) === undefined);
  for (const tunnel of orphans) tunnel.destroy();
  if (orphans.length > 0) log(`closed ${orphans.length} tunnel connection(s) of released reservations`);
}

/** openConfiguredStore opens the store of `store.url` (and `store.schema`, PostgreSQL only) with the store's one opener. */
export function openConfiguredStore({ url, schema }: EdgeStoreConfig): Promise<Store> {
  if (schema !== undefined && storeBackendOf(url) !== 'postgres') throw new EdgeConfigError('store.schema applies to a postgres:// store only');
  return openStore({ url, schema });
}

// `/v1` and below go to the control API. After a change (any method but GET) the directory is
// re-read at once, so a reservation made on this node is served here without waiting for a poll.
function mountControlApi(control: ControlApi, directory: StoreBindingDirectory, req: IncomingMessage, res: ServerResponse, announce: () => void): boolean {
  const path = (req.url ?? '').split('?')[0] ?? '';
  if (path !== '/v1' && !path.startsWith('/v1/')) return false;
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.once('finish', () => {
      void directory.refresh().catch(() => undefined);
      announce();
    });
  }
  control(req, res);
  return true;
}
