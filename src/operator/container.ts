import 'reflect-metadata';
import type { DependencyContainer, InjectionToken } from 'tsyringe';
import type { DataPlane, StaticEndpointResolver } from '../dataplane/index.js';
import type { TunnelControl } from '../agent/index.js';
import type { EventRecorder } from './event-recorder.js';
import type { Finalizers } from './finalizers.js';
import type { ObjectSource } from './object-source.js';
import { Operator } from './operator.js';
import type { OperatorOptions } from './operator.js';
import type { StatusWriter } from './status-writer.js';
import type { AcceptedCertificates } from './accepted-certificates.js';
import type { SecretReader } from './secret-reader.js';

/**
 * The operator's part of the composition root (docs/architecture.md, "Wiring"). `registerOperator`
 * (process.ts) registers each part of one operator in a child container; `operatorFrom` assembles
 * the Operator from whatever that container holds, so a test swaps one part by registering it
 * (a fake ObjectSource, a StatusWriter that records, TunnelControl that holds nothing).
 */

/** OBJECT_SOURCE resolves the object cache (KubeObjects in production). */
export const OBJECT_SOURCE: InjectionToken<ObjectSource> = Symbol.for('tuna.operator.ObjectSource');
/** DATA_PLANE resolves the data plane the tunnels feed. */
export const DATA_PLANE: InjectionToken<DataPlane> = Symbol.for('tuna.operator.DataPlane');
/** ENDPOINTS resolves the endpoint resolver the data plane reads (replaced on every sync). */
export const ENDPOINTS: InjectionToken<StaticEndpointResolver> = Symbol.for('tuna.operator.Endpoints');
/** TUNNEL_CONTROL resolves the tunnels (OperatorTunnels over the tunnel manager in production). */
export const TUNNEL_CONTROL: InjectionToken<TunnelControl> = Symbol.for('tuna.operator.TunnelControl');
/** STATUS_WRITER resolves the status writer; not registered: statuses are not written (`--no-status`). */
export const STATUS_WRITER: InjectionToken<StatusWriter> = Symbol.for('tuna.operator.StatusWriter');
/** EVENT_RECORDER resolves the event recorder; not registered: events are not recorded. */
export const EVENT_RECORDER: InjectionToken<EventRecorder> = Symbol.for('tuna.operator.EventRecorder');
/** EDGE_RECONCILER resolves the edge reconciler; not registered: the keys come from elsewhere (tests). */
export const EDGE_RECONCILER: InjectionToken<NonNullable<OperatorOptions['reconciler']>> = Symbol.for('tuna.operator.EdgeReconciler');
/** SECRET_READER resolves the reader of the Secrets listeners name; not registered: no Secret is read. */
export const SECRET_READER: InjectionToken<SecretReader> = Symbol.for('tuna.operator.SecretReader');
/** CERTIFICATES resolves the data plane's certificate source (the accepted Secrets); not registered: none is fed. */
export const CERTIFICATES: InjectionToken<AcceptedCertificates> = Symbol.for('tuna.operator.Certificates');
/** FINALIZERS resolves the finalizer writer of Domains, TCPPorts and Tunnels; not registered: no finalizer is written. */
export const FINALIZERS: InjectionToken<Pick<Finalizers, 'apply'>> = Symbol.for('tuna.operator.Finalizers');
/** OPERATOR_SETTINGS resolves the rest of the options (keys, leadership, translation, hooks); optional. */
export const OPERATOR_SETTINGS: InjectionToken<OperatorSettings> = Symbol.for('tuna.operator.Settings');

/** OperatorSettings are the options of an operator that are not one of its registered parts. */
export type OperatorSettings = Omit<OperatorOptions, 'objects' | 'dataPlane' | 'endpoints' | 'tunnels' | 'writer' | 'events' | 'reconciler' | 'secrets' | 'certificates' | 'finalizers'>;

/** operatorFrom assembles an Operator from the parts a container holds (the optional ones only when registered). */
export function operatorFrom(c: DependencyContainer): Operator {
  const optional = <T>(token: InjectionToken<T>): T | undefined => (c.isRegistered(token, true) ? c.resolve(token) : undefined);
  const options: OperatorOptions = {
    ...(optional(OPERATOR_SETTINGS) ?? {}),
    objects: c.resolve(OBJECT_SOURCE),
    dataPlane: c.resolve(DATA_PLANE),
    endpoints: c.resolve(ENDPOINTS),
    tunnels: c.resolve(TUNNEL_CONTROL),
  };
  const writer = optional(STATUS_WRITER);
  const events = optional(EVENT_RECORDER);
  const reconciler = optional(EDGE_RECONCILER);
  const secrets = optional(SECRET_READER);
  const certificates = optional(CERTIFICATES);
  const finalizers = optional(FINALIZERS);
  if (writer) options.writer = writer;
  if (events) options.events = events;
  if (reconciler) options.reconciler = reconciler;
  if (secrets) options.secrets = secrets;
  if (certificates) options.certificates = certificates;
  if (finalizers) options.finalizers = finalizers;
  return new Operator(options);
}
