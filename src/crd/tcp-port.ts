/**
 * TCPPort reserves a TCP port on the edge for the account: a specific one (`spec.port`) or, when
 * `spec.port` is absent, any port from the edge's pool (the edge picks; the reconciler writes it to
 * `status.port`). See docs/crds.md.
 */
import type * as t from 'io-ts';
import { closedObject } from '../codec/index.js';
import { portNumberCodec, reclaimPolicyCodec } from './fields.js';
import { resourceCodec } from './resource.js';

/** tcpPortSpecCodec decodes `TCPPort.spec`. */
export const tcpPortSpecCodec = closedObject('TCPPortSpec', {}, { port: portNumberCodec, reclaimPolicy: reclaimPolicyCodec });

/** TCPPortSpec is the decoded `TCPPort.spec`. */
export type TCPPortSpec = t.TypeOf<typeof tcpPortSpecCodec>;

/** tcpPortCodec decodes a whole `tuna.dev/v1alpha1` TCPPort. */
export const tcpPortCodec = resourceCodec('TCPPort', tcpPortSpecCodec);

/** TCPPort is a decoded TCPPort object. */
export type TCPPort = t.TypeOf<typeof tcpPortCodec>;
