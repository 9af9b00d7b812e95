import type { IGateway } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/Gateway';
import type { IListener } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/Listener';
import type { Listener, ListenerTls, ObjectRef, StreamRoute, VirtualHost } from '../../model/index.js';
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

/** ListenerContext is one Gateway listener while translating: its verdicts and what attached to it. */
export interface ListenerContext {
  spec: IListener;
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
  listeners: ListenerContext[];
  /** virtual hosts of this Gateway's fragment by id */
  virtualHosts: Map<string, VirtualHost>;
  streamRoutes: StreamRoute[];
  claims: HostClaim[];
  /** `<hostname> <owner kind/ns/name>` of every claim, to keep them unique */
  claimKeys: Set<string>;
}

/** TranslationContext is what every step of one translation shares. */
export interface TranslationContext {
  index: SnapshotIndex;
  controllerName: string;
  grants: ReferenceGrants;
  book: StatusBook;
  /** Gateways of tuna classes by `<namespace>/<name>` */
  gateways: Map<string, GatewayContext>;
}
