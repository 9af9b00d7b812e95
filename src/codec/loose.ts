/**
 * Loose codecs: for objects whose other fields belong to someone else (a Kubernetes object read by
 * a translator that looks at a few fields, a row whose other columns it does not map). Unknown keys
 * are kept and ignored, `null` counts as absent (as the Kubernetes API server treats it), and each
 * failure names its field with a short message (`expected a string`, `required`, `empty entry`).
 */
import * as t from 'io-ts';

/** RequiredField marks a field of a loose object that must be present (and not `null`). */
export interface RequiredField<C extends t.Mixed> {
  readonly requiredCodec: C;
}

/** LooseField is the codec of one field of a loose object, optionally marked required. */
export type LooseField = t.Mixed | RequiredField<t.Mixed>;

/** LooseProps maps field names to their codecs, in the order they are checked. */
export type LooseProps = Record<string, LooseField>;

type RequiredKeys<P extends LooseProps> = { [K in keyof P]: P[K] extends RequiredField<t.Mixed> ? K : never }[keyof P];
type FieldOut<F> = F extends RequiredField<infer C> ? t.TypeOf<C> : F extends t.Mixed ? t.TypeOf<F> : never;

/** LooseObjectOf is the decoded type of a loose object: its required fields, the others optional. */
export type LooseObjectOf<P extends LooseProps> = { [K in RequiredKeys<P>]: FieldOut<P[K]> } & {
  [K in Exclude<keyof P, RequiredKeys<P>>]?: FieldOut<P[K]>;
};

/** required marks a field of `looseObject` as required. */
export function required<C extends t.Mixed>(codec: C): RequiredField<C> {
  return { requiredCodec: codec };
}

function isRequired(field: LooseField): field is RequiredField<t.Mixed> {
  return 'requiredCodec' in field;
}

function isMapping(u: unknown): u is Record<string, unknown> {
  return typeof u === 'object' && u !== null && !Array.isArray(u);
}

/** looseString accepts a string. */
export const looseString = new t.Type<string, string, unknown>(
  'string',
  (u): u is string => typeof u === 'string',
  (u, c) => (typeof u === 'string' ? t.success(u) : t.failure(u, c, 'expected a string')),
  t.identity,
);

/** looseNumber accepts a finite number (JSON has no NaN or Infinity; YAML's `.inf` is refused). */
export const looseNumber = new t.Type<number, number, unknown>(
  'number',
  (u): u is number => typeof u === 'number' && Number.isFinite(u),
  (u, c) => (typeof u === 'number' && Number.isFinite(u) ? t.success(u) : t.failure(u, c, 'expected a number')),
  t.identity,
);

/** looseBoolean accepts a boolean. */
export const looseBoolean = new t.Type<boolean, boolean, unknown>(
  'boolean',
  (u): u is boolean => typeof u === 'boolean',
  (u, c) => (typeof u === 'boolean' ? t.success(u) : t.failure(u, c, 'expected a boolean')),
  t.identity,
);

/** anyMapping accepts any object (not a list), whatever its fields. */
export const anyMapping = new t.Type<Record<string, unknown>, Record<string, unknown>, unknown>(
  'object',
  isMapping,
  (u, c) => (isMapping(u) ? t.success(u) : t.failure(u, c, 'expected an object')),
  t.identity,
);

/**
 * looseList accepts a list whose every entry decodes with `item`; a `null` entry is refused as an
 * empty entry (YAML's `- ` with nothing after it), never skipped.
 */
export function looseList<C extends t.Mixed>(item: C): t.Type<t.TypeOf<C>[], unknown, unknown> {
  return new t.Type<t.TypeOf<C>[], unknown, unknown>(
    `list of ${item.name}`,
    (u): u is t.TypeOf<C>[] => Array.isArray(u) && u.every((v) => v !== null && v !== undefined && item.is(v)),
    (u, c) => {
      if (!Array.isArray(u)) return t.failure(u, c, 'expected a list');
      const errors: t.Errors = [];
      let out: unknown[] = u;
      for (let i = 0; i < u.length; i++) {
        const value: unknown = u[i];
        const at = t.appendContext(c, String(i), item, value);
        if (value === null || value === undefined) errors.push({ value, context: at, message: 'empty entry' });
        else {
          const r = item.validate(value, at);
          if (r._tag === 'Left') errors.push(...r.left);
          else if (r.right !== value) {
            if (out === u) out = [...u];
            out[i] = r.right;
          }
        }
      }
      return errors.length > 0 ? t.failures(errors) : t.success(out as t.TypeOf<C>[]);
    },
    t.identity,
  );
}

/**
 * looseObject accepts a mapping whose listed fields decode with their codecs, checked in the order
 * given (so the first error is the first field in that order); absent and `null` fields are fine
 * unless marked `required`. Other keys are left in place and ignored; the value is returned as is,
 * or, where a field's codec transforms (JSON text, integer text), as a shallow copy with the result.
 */
export function looseObject<P extends LooseProps>(name: string, props: P): t.Type<LooseObjectOf<P>, unknown, unknown> {
  const fields = Object.entries(props).map(([key, field]) =>
    isRequired(field) ? { key, codec: field.requiredCodec, isRequired: true } : { key, codec: field, isRequired: false },
  );
  return new t.Type<LooseObjectOf<P>, unknown, unknown>(
    name,
    (u): u is LooseObjectOf<P> =>
      isMapping(u) && fields.every((f) => (u[f.key] === undefined || u[f.key] === null ? !f.isRequired : f.codec.is(u[f.key]))),
    (u, c) => {
      if (!isMapping(u)) return t.failure(u, c, 'expected an object');
      const errors: t.Errors = [];
      let out: Record<string, unknown> = u;
      for (const f of fields) {
        const value = u[f.key];
        if (value === undefined || value === null) {
          if (f.isRequired) errors.push({ value, context: t.appendContext(c, f.key, f.codec, value), message: 'required' });
          continue;
        }
        const r = f.codec.validate(value, t.appendContext(c, f.key, f.codec, value));
        if (r._tag === 'Left') errors.push(...r.left);
        else if (r.right !== value) {
          if (out === u) out = { ...u };
          out[f.key] = r.right;
        }
      }
      return errors.length > 0 ? t.failures(errors) : t.success(out as LooseObjectOf<P>);
    },
    t.identity,
  );
}
