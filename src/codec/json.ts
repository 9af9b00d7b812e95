/** JSON held as text (a database column, a Secret's value): parsed and decoded in one step. */
import * as t from 'io-ts';

/**
 * jsonText decodes a string holding JSON with `inner`; text that is not JSON fails at the same path,
 * so a corrupt column is named, not a SyntaxError from deep inside. The parser's own message is
 * left out on purpose: it quotes the text, which may hold a secret (a Secret's token).
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
      } catch {
        return t.failure(u, c, 'expected JSON text');
      }
      return inner.validate(parsed, c) as t.Validation<t.TypeOf<C>>;
    },
    (a) => JSON.stringify(inner.encode(a)),
  );
}
