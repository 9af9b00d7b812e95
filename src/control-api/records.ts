import * as t from 'io-ts';

/**
 * The control API's records, as the edge's store keeps them and as they travel on the wire
 * (docs/edge.md "Control API"). The io-ts codecs are the one definition: the TypeScript types are
 * derived from them, the edge's store (src/edge/store) uses these types for its rows, and the
 * client checks every answer with the codecs. Records are open objects (`t.type`): an edge newer
 * than its client may add fields without breaking it.
 */

function keysOf<K extends string>(values: readonly K[]): Record<K, null> {
  return Object.fromEntries(values.map((v) => [v, null])) as Record<K, null>;
}

/** API_KEY_SCOPES lists every API key scope, in canonical order (DESIGN "Keys and trust"). */
export const API_KEY_SCOPES = ['reservations', 'tunnels', 'admin'] as const;
/** ApiKeyScopeCodec is what an account API key may do. */
export const ApiKeyScopeCodec = t.keyof(keysOf(API_KEY_SCOPES), 'ApiKeyScope');
/** ApiKeyScope is what an account API key may do. */
export type ApiKeyScope = t.TypeOf<typeof ApiKeyScopeCodec>;

/** TUNNEL_PROTOCOLS lists every tunnel protocol, in canonical order. */
export const TUNNEL_PROTOCOLS = ['http', 'https', 'tls', 'tcp', 'udp'] as const;
/** TunnelProtocolCodec is what a tunnel key may carry: the public protocol of its binding. */
export const TunnelProtocolCodec = t.keyof(keysOf(TUNNEL_PROTOCOLS), 'TunnelProtocol');
/** TunnelProtocol is what a tunnel key may carry: the public protocol of its binding. */
export type TunnelProtocol = t.TypeOf<typeof TunnelProtocolCodec>;

/** RESERVATION_KINDS lists the kinds of public address a reservation holds (DESIGN "Addresses"). */
export const RESERVATION_KINDS = ['domain', 'tcp-port', 'address'] as const;
/** ReservationKindCodec is the kind of public address a reservation holds. */
export const ReservationKindCodec = t.keyof(keysOf(RESERVATION_KINDS), 'ReservationKind');
/** ReservationKind is the kind of public address a reservation holds. */
export type ReservationKind = t.TypeOf<typeof ReservationKindCodec>;

/** DomainTypeCodec says whether a domain is under the edge's base domain or the user's own. */
export const DomainTypeCodec = t.keyof({ subdomain: null, custom: null }, 'DomainType');
/** DomainType says whether a domain is under the edge's base domain or the user's own. */
export type DomainType = t.TypeOf<typeof DomainTypeCodec>;

/** LabelsCodec is string key/value pairs, as on Kubernetes objects (cluster id, owner uid, ...). */
export const LabelsCodec = t.readonly(t.record(t.string, t.string), 'Labels');
/** Labels are string key/value pairs, as on Kubernetes objects. */
export type Labels = t.TypeOf<typeof LabelsCodec>;
/** LabelSelector matches records whose labels include every pair (Kubernetes `matchLabels`). */
export type LabelSelector = Labels;

const nullableNumber = t.union([t.number, t.null]);
const nullableString = t.union([t.string, t.null]);

/** AccountCodec is a tenant of the edge; every other record belongs to one. */
export const AccountCodec = t.readonly(
  t.type({
    id: t.string,
    name: t.string,
    createdAt: t.number,
    /** set once an admin disabled the account: its keys no longer authenticate */
    disabledAt: nullableNumber,
  }),
  'Account',
);
/** Account is a tenant of the edge. */
export type Account = t.TypeOf<typeof AccountCodec>;

/**
 * AccountQuotasCodec is an account's quotas (docs/edge-store.md "Quotas and unverified domains"): its overrides (null: the edge's
 * default) and the limits in force.
 */
export const AccountQuotasCodec = t.readonly(
  t.type({
    accountId: t.string,
    /** the admin's overrides; null follows the edge's `store.quotas` */
    overrides: t.type({ reservations: nullableNumber, tunnelKeys: nullableNumber, concurrentTunnels: nullableNumber }),
    /** the limits in force: held reservations, live (unrevoked, unexpired) tunnel keys, live tunnels of `tunnels` API keys per edge node */
    limits: t.type({ reservations: t.number, tunnelKeys: t.number, concurrentTunnels: t.number }),
  }),
  'AccountQuotas',
);
/** AccountQuotas is an account's quota overrides and the limits in force. */
export type AccountQuotas = t.TypeOf<typeof AccountQuotasCodec>;

/** ApiKeyCodec is the stored part of an account API key: never its secret. */
export const ApiKeyCodec = t.readonly(
  t.type({
    id: t.string,
    accountId: t.string,
    name: t.string,
    scopes: t.readonlyArray(ApiKeyScopeCodec),
    createdAt: t.number,
    revokedAt: nullableNumber,
  }),
  'ApiKey',
);
/** ApiKey is the stored part of an account API key. */
export type ApiKey = t.TypeOf<typeof ApiKeyCodec>;

/**
 * ListenerStatusCodec is one public listener a reservation needs on the edge node that answers
 * (tcp-port and address reservations): open, or failed to bind with the cause,
 * how many attempts failed in a row and when the edge tries again.
 */
export const ListenerStatusCodec = t.readonly(
  t.type({
    address: t.string,
    port: t.number,
    protocol: TunnelProtocolCodec,
    state: t.keyof({ listening: null, failed: null }),
    /** failed only: why the last attempt failed (e.g. `EADDRINUSE`); null while listening */
    error: nullableString,
    /** failed attempts in a row; 0 while listening */
    failures: t.number,
    /** failed only: epoch ms of the next attempt (a reservation change also retries at once); null while listening */
    retryAt: nullableNumber,
  }),
  'ListenerStatus',
);
/** ListenerStatus is one public listener of a reservation, open or failed to bind. */
export type ListenerStatus = t.TypeOf<typeof ListenerStatusCodec>;

/** ReservationStatusCodec is what the answering edge node does with a reservation now (never stored). */
export const ReservationStatusCodec = t.readonly(t.type({ listeners: t.readonlyArray(ListenerStatusCodec) }), 'ReservationStatus');
/** ReservationStatus is what the answering edge node does with a reservation now. */
export type ReservationStatus = t.TypeOf<typeof ReservationStatusCodec>;

/**
 * PORT_PROTOCOLS lists the public protocols a port of a dedicated address may serve, in canonical
 * order. `udp` is the one datagram protocol: a port number may carry it beside one of the others
 * (DNS on TCP and UDP 53), since TCP and UDP ports are separate (docs/protocol.md §4.6).
 */
export const PORT_PROTOCOLS = ['http', 'https', 'tls', 'tcp', 'udp'] as const;

/** portTransportOf is the transport a port protocol binds: `udp` for udp, `tcp` for the rest (which share a TCP port). */
export function portTransportOf(protocol: (typeof PORT_PROTOCOLS)[number]): 'tcp' | 'udp' {
  return protocol === 'udp' ? 'udp' : 'tcp';
}
/** PortProtocolCodec is the public protocol of one port of a dedicated address. */
export const PortProtocolCodec = t.keyof(keysOf(PORT_PROTOCOLS), 'PortProtocol');
/** PortProtocol is the public protocol of one port of a dedicated address. */
export type PortProtocol = t.TypeOf<typeof PortProtocolCodec>;

/** PortSpecCodec is one port a dedicated address serves and the public protocol on it. */
export const PortSpecCodec = t.readonly(t.type({ port: t.number, protocol: PortProtocolCodec }), 'PortSpec');
/** PortSpec is one port a dedicated address serves and the public protocol on it. */
export type PortSpec = t.TypeOf<typeof PortSpecCodec>;

/** ReservationCodec is an address held by one account until released. */
export const ReservationCodec = t.readonly(
  t.intersection([t.type({
    id: t.string,
    accountId: t.string,
    kind: ReservationKindCodec,
    /** the address itself: a lower-case hostname, a port number in decimal, or an IP address */
    value: t.string,
    /** optional per-account name that makes pool allocations idempotent (e.g. `default/web`) */
    name: nullableString,
    labels: LabelsCodec,
    /** domains only: subdomain of the base domain, or a custom domain */
    domainType: t.union([DomainTypeCodec, t.null]),
    /** custom domains only: the value the DNS TXT record must hold */
    verificationToken: nullableString,
    /** subdomains are verified at creation; custom domains once the TXT record was seen */
    verified: t.boolean,
    createdAt: t.number,
    updatedAt: t.number,
  }),
  t.partial({
    // GET answers only, tcp-port and address kinds: the listeners of the answering node
    status: ReservationStatusCodec,
    /**
     * address reservations only: the ports the edge opens on that address, sorted by port then
     * protocol; absent: the edge's configured `addressPorts` (older reservations, clients that name none)
     */
    ports: t.readonlyArray(PortSpecCodec),
  })]),
  'Reservation',
);
/** Reservation is an address held by one account until released. */
export type Reservation = t.TypeOf<typeof ReservationCodec>;

/** TunnelKeyCodec is the stored part of a tunnel key (never its secret): one reservation, one protocol. */
export const TunnelKeyCodec = t.readonly(
  t.type({
    id: t.string,
    accountId: t.string,
    reservationId: t.string,
    protocol: TunnelProtocolCodec,
    /** how many live tunnel connections the key may hold at once (HA replicas) */
    maxConnections: t.number,
    expiresAt: t.number,
    labels: LabelsCodec,
    createdAt: t.number,
    rotatedAt: nullableNumber,
    revokedAt: nullableNumber,
  }),
  'TunnelKey',
);
/** TunnelKey is the stored part of a tunnel key. */
export type TunnelKey = t.TypeOf<typeof TunnelKeyCodec>;

/** AuditEventCodec is one change: who, what, when. `detail` never holds a secret. */
export const AuditEventCodec = t.readonly(
  t.type({
    seq: t.number,
    at: t.number,
    actor: t.string,
    action: t.string,
    accountId: nullableString,
    targetKind: t.string,
    targetId: t.string,
    detail: t.readonly(t.record(t.string, t.unknown)),
  }),
  'AuditEvent',
);
/** AuditEvent is one change in the audit log. */
export type AuditEvent = t.TypeOf<typeof AuditEventCodec>;

/** PortPoolCodec is an inclusive TCP port range the edge allocates from. */
export const PortPoolCodec = t.readonly(t.type({ first: t.number, last: t.number }), 'PortPool');
/** PortPool is an inclusive TCP port range the edge allocates from. */
export type PortPool = t.TypeOf<typeof PortPoolCodec>;


const ListenerCodec = t.union([t.readonly(t.type({ port: t.number })), t.null]);

/**
 * EdgeInfoCodec is `GET /v1/edge`: what a client needs to know about the edge it talks to, so it
 * need not be told twice (the operator's base domain, the pools it may reserve from).
 */
export const EdgeInfoCodec = t.readonly(
  t.intersection([t.type({
    /** the tuna version the edge runs */
    version: t.string,
    /** `<name>.<baseDomain>` is a subdomain reservation, served under the edge's wildcard certificate */
    baseDomain: t.string,
    /** TCP ports `tcp-port` reservations without a port are allocated from; null: none (a port must be named) */
    portPool: t.union([PortPoolCodec, t.null]),
    /** dedicated addresses: the pool (IPv4 CIDR or range) and the ports every address serves; null: none */
    addressPool: t.union([t.readonly(t.type({ range: t.string, ports: t.readonlyArray(PortSpecCodec) })), t.null]),
    /** the public HTTP and HTTPS listeners (the bound ports); null where there is none */
    http: ListenerCodec,
    https: ListenerCodec,
    /** the scheme of a reserved hostname's public URL: https when the edge has an HTTPS listener */
    scheme: t.union([t.literal('https'), t.literal('http'), t.null]),
  }),
  // optional: edges before it did not send it
  t.partial({
    /** the host the edge's tcp-port listeners bind (`0.0.0.0`: every address; then only DNS can name the edge) */
    tcpHost: t.string,
    /**
     * the inclusive range the ports of an address reservation may be chosen from (`ports` of POST
     * /v1/reservations, PUT /v1/reservations/{id}/ports); null: no range configured, only the ports
     * of `addressPool.ports` may be asked for
     */
    addressPortRange: t.union([PortPoolCodec, t.null]),
  }),
  ]),
  'EdgeInfo',
);
/** EdgeInfo is what `GET /v1/edge` tells about the edge. */
export type EdgeInfo = t.TypeOf<typeof EdgeInfoCodec>;
