/**
 * Decoding with readable errors. io-ts reports a failure as a context stack; users need one line
 * per problem with the field path (`spec.service.port: expected number or string`), the same shape
 * kubectl prints for schema errors.
 */
import type * as t from 'io-ts';

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

/**
 * formatError renders one io-ts error as `<path>: <message>`; `root` names the value decoded
 * (`spec` gives `spec.rules[0].matches: expected a list`).
 */
export function formatError(error: t.ValidationError, root = ''): string {
  const { path, expected } = pathOf(error.context);
  const message = error.message ?? `expected ${expected}`;
  const where = root === '' ? path : path === '' ? root : path.startsWith('[') ? `${root}${path}` : `${root}.${path}`;
  return where === '' ? message : `${where}: ${message}`;
}

/** formatErrors renders io-ts errors as sorted, de-duplicated `<path>: <message>` lines. */
export function formatErrors(errors: t.Errors, root = ''): string[] {
  return [...new Set(errors.map((e) => formatError(e, root)))].sort();
}

/** decodeWith runs a codec and returns a DecodeResult with readable errors. */
export function decodeWith<A>(codec: t.Decoder<unknown, A>, input: unknown, root = ''): DecodeResult<A> {
  const result = codec.decode(input);
  return result._tag === 'Right' ? { ok: true, value: result.right } : { ok: false, errors: formatErrors(result.left, root) };
}

/**
 * firstProblem returns the first error of decoding `input` in the order the codec checks fields
 * (not sorted: the first field of a form is the one to fix first), or undefined when it decodes.
 */
export function firstProblem(codec: t.Decoder<unknown, unknown>, input: unknown, root = ''): string | undefined {
  const result = codec.decode(input);
  const first = result._tag === 'Left' ? result.left[0] : undefined;
  return first === undefined ? undefined : formatError(first, root);
}
