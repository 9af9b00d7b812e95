/**
 * Decoding with readable errors. io-ts reports a failure as a context stack; users need one line
 * per problem with the field path (`spec.service.port: expected number or string`), the same shape
 * kubectl prints for schema errors.
 */
import type * as t from 'io-ts';
import { domainCodec } from './domain.js';
import type { Domain } from './domain.js';
import { tcpPortCodec } from './tcp-port.js';
import type { TCPPort } from './tcp-port.js';
import { tunnelCodec } from './tunnel.js';
import type { Tunnel } from './tunnel.js';

/** DecodeResult is a decoded value, or the readable problems (`<path>: <message>`, sorted) that stopped it. */
export type DecodeResult<A> = { ok: true; value: A } | { ok: false; errors: string[] };

/** Union and intersection members add index keys (`0`, `1`) that are not fields of the object. */
function isCombinator(type: t.Decoder<unknown, unknown>): boolean {
  const tag = (type as { _tag?: string })._tag;
  return tag === 'UnionType' || tag === 'IntersectionType';
}

/** pathOf turns an io-ts context into `spec.service.port` (array items as `[0]`), and the type found there. */
function pathOf(context: t.Context): { path: string; expected: string } {
  let path = '';
  let expected = '';
  context.forEach((entry, i) => {
    const parent = i > 0 ? context[i - 1] : undefined;
    if (i === 0 || (parent && isCombinator(parent.type))) return;
    path += /^\d+$/.test(entry.key) ? `[${entry.key}]` : path === '' ? entry.key : `.${entry.key}`;
    expected = entry.type.name;
  });
  return { path, expected: expected || (context[0]?.type.name ?? 'value') };
}

/** formatErrors renders io-ts errors as sorted, de-duplicated `<path>: <message>` lines. */
export function formatErrors(errors: t.Errors): string[] {
  const lines = new Set<string>();
  for (const e of errors) {
    const { path, expected } = pathOf(e.context);
    const message = e.message ?? `expected ${expected}`;
    lines.add(path === '' ? message : `${path}: ${message}`);
  }
  return [...lines].sort();
}

/** decodeWith runs a codec and returns a DecodeResult with readable errors. */
export function decodeWith<A>(codec: t.Decoder<unknown, A>, input: unknown): DecodeResult<A> {
  const result = codec.decode(input);
  return result._tag === 'Right' ? { ok: true, value: result.right } : { ok: false, errors: formatErrors(result.left) };
}

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
