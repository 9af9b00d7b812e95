/**
 * A closed-object io-ts combinator. `t.type` ignores keys it does not know and `t.exact` silently
 * strips them; for user-written specs both hide typos (`reclaimpolicy: Retain` would quietly fall
 * back to Delete and lose the user's domain). A closed object reports every unknown key instead.
 */
import * as t from 'io-ts';

/** Props maps field names to their codecs. */
export type Props = Record<string, t.Mixed>;

type OptionalOut<P extends Props> = { [K in keyof P]?: t.TypeOf<P[K]> };
type RequiredOut<P extends Props> = { [K in keyof P]: t.TypeOf<P[K]> };

/** ClosedObjectOf is the decoded type of a closed object with required props R and optional props O. */
export type ClosedObjectOf<R extends Props, O extends Props> = RequiredOut<R> & OptionalOut<O>;

/** unknownField is the codec reported at the path of a key the schema does not define. */
export const unknownField = new t.Type<never>(
  'unknown field',
  (_u): _u is never => false,
  (u, c) => t.failure(u, c, 'unknown field'),
  () => {
    throw new Error('unknownField has no encoding');
  },
);

function isRecord(u: unknown): u is Record<string, unknown> {
  return typeof u === 'object' && u !== null && !Array.isArray(u);
}

/**
 * closedObject decodes an object whose keys must all be in `required` or `optional`. A missing
 * required key, a bad value and an unknown key each give one error at its own path. An optional key
 * set to `null` counts as absent, as the Kubernetes API server treats it.
 */
export function closedObject<R extends Props, O extends Props>(
  name: string,
  required: R,
  optional: O,
): t.Type<ClosedObjectOf<R, O>, unknown, unknown> {
  const known = new Set([...Object.keys(required), ...Object.keys(optional)]);
  return new t.Type<ClosedObjectOf<R, O>, unknown, unknown>(
    name,
    (u): u is ClosedObjectOf<R, O> => isRecord(u) && Object.keys(u).every((k) => known.has(k)),
    (u, c) => {
      if (u === undefined || u === null) return t.failure(u, c, 'required field is missing');
      if (!isRecord(u)) return t.failure(u, c, `expected ${name}`);
      const errors: t.Errors = [];
      const out: Record<string, unknown> = {};
      for (const key of Object.keys(u).sort()) {
        if (!known.has(key)) errors.push(...failuresOf(unknownField.validate(u[key], t.appendContext(c, key, unknownField, u[key]))));
      }
      const visit = (key: string, codec: t.Mixed, isRequired: boolean): void => {
        const value = u[key];
        if (value === undefined || value === null) {
          if (isRequired) errors.push({ value, context: t.appendContext(c, key, codec, value), message: 'required field is missing' });
          return;
        }
        const result = codec.validate(value, t.appendContext(c, key, codec, value));
        if (result._tag === 'Left') errors.push(...result.left);
        else out[key] = result.right;
      };
      for (const [key, codec] of Object.entries(required)) visit(key, codec, true);
      for (const [key, codec] of Object.entries(optional)) visit(key, codec, false);
      return errors.length > 0 ? t.failures(errors) : t.success(out as ClosedObjectOf<R, O>);
    },
    t.identity,
  );
}

function failuresOf(result: t.Validation<unknown>): t.Errors {
  return result._tag === 'Left' ? result.left : [];
}
