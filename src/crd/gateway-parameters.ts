/**
 * GatewayParameters configures the Gateways that name it: a GatewayClass's `spec.parametersRef`
 * (defaults for every Gateway of the class) or a Gateway's `spec.infrastructure.parametersRef` (that
 * Gateway only; its fields win over the class's, as GEP-1867 recommends). It holds only what tuna
 * honours per Gateway. See docs/crds.md.
 */
import * as t from 'io-ts';
import { closedObject } from '../codec/index.js';
import { resourceCodec } from './resource.js';

/** MAX_TUNNEL_CONNECTIONS bounds `spec.tunnelConnections`: each one is a TLS connection per edge node per operator replica. */
export const MAX_TUNNEL_CONNECTIONS = 16;

/** isTunnelConnections says whether n is a usable `spec.tunnelConnections` (an integer 1–MAX_TUNNEL_CONNECTIONS). */
export function isTunnelConnections(n: unknown): n is number {
  return typeof n === 'number' && Number.isInteger(n) && n >= 1 && n <= MAX_TUNNEL_CONNECTIONS;
}

const tunnelConnectionsCodec = new t.Type<number, number, unknown>(
  `integer 1-${MAX_TUNNEL_CONNECTIONS}`,
  isTunnelConnections,
  (u, c) => (isTunnelConnections(u) ? t.success(u) : t.failure(u, c, `expected integer 1-${MAX_TUNNEL_CONNECTIONS}`)),
  t.identity,
);

/** gatewayParametersSpecCodec decodes `GatewayParameters.spec`. */
export const gatewayParametersSpecCodec = closedObject('GatewayParametersSpec', {}, { tunnelConnections: tunnelConnectionsCodec });

/** GatewayParametersSpec is the decoded `GatewayParameters.spec`. */
export type GatewayParametersSpec = t.TypeOf<typeof gatewayParametersSpecCodec>;

/** gatewayParametersCodec decodes a whole `tuna.dev/v1alpha1` GatewayParameters. */
export const gatewayParametersCodec = resourceCodec('GatewayParameters', gatewayParametersSpecCodec);

/** GatewayParameters is a decoded GatewayParameters object. */
export type GatewayParameters = t.TypeOf<typeof gatewayParametersCodec>;
