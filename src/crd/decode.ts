/** Decoders of the tuna.dev/v1alpha1 kinds, with readable errors (src/codec). */
import { decodeWith } from '../codec/index.js';
import type { DecodeResult } from '../codec/index.js';
import { domainCodec } from './domain.js';
import type { Domain } from './domain.js';
import { tcpPortCodec } from './tcp-port.js';
import type { TCPPort } from './tcp-port.js';
import { tunnelCodec } from './tunnel.js';
import type { Tunnel } from './tunnel.js';
import { routePolicyCodec } from './route-policy.js';
import type { RoutePolicy } from './route-policy.js';
import { gatewayParametersCodec } from './gateway-parameters.js';
import type { GatewayParameters } from './gateway-parameters.js';

/** decodeDomain decodes a Domain object. */
export function decodeDomain(input: unknown): DecodeResult<Domain> {
  return decodeWith(domainCodec, input);
}

/** decodeTCPPort decodes a TCPPort object. */
export function decodeTCPPort(input: unknown): DecodeResult<TCPPort> {
  return decodeWith(tcpPortCodec, input);
}

/** decodeTunnel decodes a Tunnel object. */
export function decodeTunnel(input: unknown): DecodeResult<Tunnel> {
  return decodeWith(tunnelCodec, input);
}

/** decodeRoutePolicy decodes a RoutePolicy object. */
export function decodeRoutePolicy(input: unknown): DecodeResult<RoutePolicy> {
  return decodeWith(routePolicyCodec, input);
}

/** decodeGatewayParameters decodes a GatewayParameters object. */
export function decodeGatewayParameters(input: unknown): DecodeResult<GatewayParameters> {
  return decodeWith(gatewayParametersCodec, input);
}
