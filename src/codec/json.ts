/** JSON held as text (a database column, a Secret's value): parsed and decoded in one step. */
import * as t from 'io-ts';

/**
 * jsonText decodes a string holding JSON with `inner`; text that is not JSON fails at the same path
 * with the parser's reason, so a corrupt column is named, not a SyntaxError from deep inside.
 */
export function jsonText<C extends t.Mixed>(inner: C): t.Type<t.TypeOf<C>, string, unknown> {
  return new t.Type<t.TypeOf<C>, string, unknown>(
    `JSON ${inner.name}`,
    (u): u is t.TypeOf<C> => inner.is(u),
    (u, c) => {
      if (typeof u !== 'string') return t.failure(u, c, 'expected JSON text');
      let parsed: unknown;
      try {
        parsed = JSON.parse(u);
      } catch (err) {
        return t.failure(u, c, `not JSON (${(err as Error).message})`);
      }
      return inner.validate(parsed, c) as t.Validation<t.TypeOf<C>>;
    },
    (a) => JSON.stringify(inner.encode(a)),
  );
}
