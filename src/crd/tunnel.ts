/**
 * Tunnel publishes one Service of its own namespace without an Ingress: over HTTP on a hostname,
 * as raw TCP on an edge port, or as TLS passed through by SNI. See docs/crds.md.
 */
import * as t from 'io-ts';
import { closedObject } from '../codec/index.js';
import { localObjectReferenceCodec, nonEmptyString, servicePortCodec } from './fields.js';
import { resourceCodec } from './resource.js';

/**
 * tunnelServiceCodec names the Service to publish. It has no `namespace` on purpose: a Tunnel
 * publishes only its own namespace (DESIGN "Namespace isolation"), and the closed object rejects a
 * `namespace` key instead of quietly ignoring it.
 */
export const tunnelServiceCodec = closedObject('TunnelService', { name: nonEmptyString, port: servicePortCodec }, {});

/** tunnelProtocolCodec is what the public side of a Tunnel speaks. */
export const tunnelProtocolCodec = t.keyof({ http: null, tcp: null, tls: null }, '"http" | "tcp" | "tls"');

/** TunnelProtocol is `http`, `tcp` or `tls`. */
export type TunnelProtocol = t.TypeOf<typeof tunnelProtocolCodec>;

const tunnelSpecFields = closedObject(
  'TunnelSpec',
  { service: tunnelServiceCodec, protocol: tunnelProtocolCodec },
  { domainRef: localObjectReferenceCodec, tcpPortRef: localObjectReferenceCodec },
);

type TunnelSpecFields = t.TypeOf<typeof tunnelSpecFields>;

/** tunnelSpecProblem says which reference does not fit the protocol, if any (the CRD's CEL rules). */
function tunnelSpecProblem(spec: TunnelSpecFields): { key: string; message: string } | undefined {
  if (spec.tcpPortRef !== undefined && spec.protocol !== 'tcp')
    return { key: 'tcpPortRef', message: `only a tcp Tunnel takes a tcpPortRef (protocol is ${spec.protocol})` };
  if (spec.domainRef !== undefined && spec.protocol === 'tcp')
    return { key: 'domainRef', message: 'a tcp Tunnel has no hostname: use tcpPortRef, not domainRef' };
  return undefined;
}

/** tunnelSpecCodec decodes `Tunnel.spec`: domainRef only for http/tls, tcpPortRef only for tcp. */
export const tunnelSpecCodec = new t.Type<TunnelSpecFields, unknown, unknown>(
  'TunnelSpec',
  (u): u is TunnelSpecFields => tunnelSpecFields.is(u) && tunnelSpecProblem(u) === undefined,
  (u, c) => {
    const fields = tunnelSpecFields.validate(u, c);
    if (fields._tag === 'Left') return fields;
    const problem = tunnelSpecProblem(fields.right);
    if (problem) {
      const value = (fields.right as Record<string, unknown>)[problem.key];
      return t.failures([{ value, context: t.appendContext(c, problem.key, t.unknown, value), message: problem.message }]);
    }
    return t.success(fields.right);
  },
  t.identity,
);

/** TunnelSpec is the decoded `Tunnel.spec`. */
export type TunnelSpec = t.TypeOf<typeof tunnelSpecCodec>;

/** tunnelCodec decodes a whole `tuna.dev/v1alpha1` Tunnel. */
export const tunnelCodec = resourceCodec('Tunnel', tunnelSpecCodec);

/** Tunnel is a decoded Tunnel object. */
export type Tunnel = t.TypeOf<typeof tunnelCodec>;
