import type { IGateway } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/Gateway';
import type { IListener } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/Listener';
import type { IListenerSet } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/ListenerSet';
import type { DedicatedDataPlane, Listener, ListenerTls, ObjectRef, StreamRoute, VirtualHost } from '../../model/index.js';
import type { HostClaim } from '../types.js';
import type { SnapshotIndex } from '../common/index-snapshot.js';
import type { StatusBook } from '../common/meta.js';
import type { GatewayReason } from '../common/reasons.js';
import type { RouteKind } from './kinds.js';
import type { ReferenceGrants } from './reference-grants.js';

/** Problem is a condition reason and message. */
export interface Problem {
  reason: GatewayReason;
  message: string;
}

/**
 * ListenerOwner is the object that declares a listener: its Gateway, or a ListenerSet attached to
 * it. Its namespace is the one `allowedRoutes.namespaces.from: Same` and certificate references are
 * read against, and its kind the one ReferenceGrants must name (GEP-1713: grants to a Gateway are
 * not inherited by its ListenerSets).
 */
export interface ListenerOwner {
  kind: 'Gateway' | 'ListenerSet';
  namespace: string;
  ref: ObjectRef;
}

/** ListenerContext is one Gateway or ListenerSet listener while translating: its verdicts and what attached to it. */
export interface ListenerContext {
  spec: IListener;
  owner: ListenerOwner;
  name: string;
  port: number;
  protocol: string;
  hostname?: string;
  /** TLS handling for HTTPS and TLS listeners (certificates resolved) */
  tls?: ListenerTls;
  /** route kinds that may attach (the status `supportedKinds`) */
  kinds: RouteKind[];
  /** set when the listener is not Accepted */
  notAccepted?: Problem;
  /** set when a reference (certificate, route kind) could not be resolved */
  unresolved?: Problem;
  /** set when the listener is not distinct from another one on its port */
  conflict?: Problem;
  /** the graph listener, present only when the listener is served */
  graph?: Listener;
  /** `<kind>/<namespace>/<name>` of every route attached */
  attached: Set<string>;
  /** admits routes from a namespace (allowedRoutes.namespaces) */
  admitsNamespace: (namespace: string) => boolean;
}

/** GatewayContext is one Gateway of a tuna class while translating. */
export interface GatewayContext {
  obj: IGateway;
  ref: ObjectRef;
  namespace: string;
  name: string;
  generation?: number;
  bindingId: string;
  /** the IPv4 addresses `spec.addresses` asks for (empty: any from the edge's pool) */
  requestedAddresses: string[];
  /** set when the Gateway as a whole is not accepted */
  rejected?: Problem;
  /** GatewayParameters `tunnelConnections` (the Gateway's over its class's): the binding's connections per edge */
  tunnelConnections?: number;
  /** GatewayParameters `dataPlane: Dedicated` (the Gateway's over its class's): how its own pods run (the binding's `dedicated`) */
  dedicated?: DedicatedDataPlane;
  listeners: ListenerContext[];
  /** the ListenerSets naming this Gateway as their parent, in listener precedence order (GEP-1713) */
  listenerSets: ListenerSetContext[];
  /** virtual hosts of this Gateway's fragment by id */
  virtualHosts: Map<string, VirtualHost>;
  streamRoutes: StreamRoute[];
  /** each stream route's age key (`<creationTimestamp> <namespace>/<name>`): the oldest on a TCP listener serves it */
  streamRouteAges: Map<string, string>;
  claims: HostClaim[];
  /** `<hostname> <owner kind/ns/name>` of every claim, to keep them unique */
  claimKeys: Set<string>;
}

/** ListenerSetContext is one ListenerSet whose parent is a Gateway of a tuna class. */
export interface ListenerSetContext {
  obj: IListenerSet;
  ref: ObjectRef;
  namespace: string;
  name: string;
  generation?: number;
  /** creation timestamp (RFC 3339), '' if unknown: the second key of listener precedence */
  created: string;
  gateway: GatewayContext;
  /** set when the ListenerSet as a whole is not accepted (NotAllowed, ParentNotAccepted, Invalid) */
  rejected?: Problem;
  /** its listeners (none when rejected) */
  listeners: ListenerContext[];
}

/** TranslationContext is what every step of one translation shares. */
export interface TranslationContext {
  index: SnapshotIndex;
  controllerName: string;
  grants: ReferenceGrants;
  book: StatusBook;
  /** Gateways of tuna classes by `<namespace>/<name>` */
  gateways: Map<string, GatewayContext>;
  /** ListenerSets whose parent is one of `gateways`, by `<namespace>/<name>` */
  listenerSets: Map<string, ListenerSetContext>;
}
