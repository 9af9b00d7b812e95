import * as t from 'io-ts';
import { closedObject, decodeWith } from '../../codec/index.js';
import { API_KEY_SCOPES, TUNNEL_PROTOCOLS } from '../store/index.js';
import type { ApiKeyScope, TunnelProtocol } from '../store/index.js';
import { ControlInvalidRequestError } from './errors.js';

/**
 * io-ts codecs for control API request bodies (STYLE: io-ts at every boundary). Objects are closed:
 * an unknown field is a 400 naming it, so a typo (`lables`) is never silently ignored.
 */

const scopeCodec = t.keyof(Object.fromEntries(API_KEY_SCOPES.map((s) => [s, null])) as Record<ApiKeyScope, null>);
const protocolCodec = t.keyof(Object.fromEntries(TUNNEL_PROTOCOLS.map((p) => [p, null])) as Record<TunnelProtocol, null>);
const labelsCodec = t.record(t.string, t.string);
const positiveInt = t.refinement(t.Int, (n) => n > 0, 'positive integer');
const nonNegativeInt = t.refinement(t.Int, (n) => n >= 0, 'non-negative integer');

/** createAccountBody is POST /v1/accounts. */
export const createAccountBody = closedObject('CreateAccount', { name: t.string }, {});

/** createApiKeyBody is POST /v1/api-keys (accountId: admins creating a key for another account). */
export const createApiKeyBody = closedObject('CreateApiKey', { name: t.string, scopes: t.array(scopeCodec) }, { accountId: t.string });

/** createReservationBody is POST /v1/reservations: port/address absent means "allocate from the pool". */
export const createReservationBody = closedObject(
  'CreateReservation',
  { kind: t.keyof({ 'domain': null, 'tcp-port': null, 'address': null }) },
  { hostname: t.string, port: t.Int, address: t.string, name: t.string, labels: labelsCodec },
);

/** mintTunnelKeyBody is POST /v1/tunnel-keys. */
export const mintTunnelKeyBody = closedObject(
  'MintTunnelKey',
  { reservationId: t.string, protocol: protocolCodec },
  { maxConnections: positiveInt, ttlSeconds: positiveInt, labels: labelsCodec },
);

/** rotateTunnelKeyBody is POST /v1/tunnel-keys/{id}/rotate. */
export const rotateTunnelKeyBody = closedObject('RotateTunnelKey', {}, { ttlSeconds: positiveInt, graceSeconds: nonNegativeInt });

/** decodeBody decodes a body or throws a 400 naming the first offending field. */
export function decodeBody<A>(codec: t.Decoder<unknown, A>, body: unknown): A {
  const result = decodeWith(codec, body);
  if (result.ok) return result.value;
  const first = result.errors[0] ?? 'invalid request body';
  const cut = first.indexOf(': ');
  throw new ControlInvalidRequestError(first, cut > 0 ? first.slice(0, cut) : 'body');
}

/**
 * parseSelector reads a label selector from the query: `selector=cluster=c1,owner-uid=u1`
 * (Kubernetes-style, for plain keys) and/or `label.<key>=<value>` (each part percent-encoded on
 * its own, so keys and values may hold any text, `=` and `,` included).
 */
export function parseSelector(query: URLSearchParams): Record<string, string> | undefined {
  const selector: Record<string, string> = {};
  for (const term of (query.get('selector') ?? '').split(',')) {
    if (term === '') continue;
    const eq = term.indexOf('=');
    if (eq <= 0) throw new ControlInvalidRequestError('selector terms must be key=value', 'selector');
    selector[term.slice(0, eq)] = term.slice(eq + 1);
  }
  for (const [name, value] of query) {
    if (name.startsWith('label.') && name.length > 'label.'.length) selector[name.slice('label.'.length)] = value;
  }
  return Object.keys(selector).length ? selector : undefined;
}
