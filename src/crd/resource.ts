/**
 * The envelope every tuna.dev/v1alpha1 object shares: apiVersion, kind, metadata, spec, status.
 * Top-level keys other than these are left alone (the API server owns them); the spec is closed.
 */
import * as t from 'io-ts';
import { apiVersionCodec, objectMetaCodec } from './fields.js';

/** resourceCodec builds the codec of a tuna.dev/v1alpha1 kind from its kind name and spec codec. */
export function resourceCodec<K extends string, S extends t.Mixed>(kind: K, spec: S) {
  return t.intersection(
    [
      t.type({ apiVersion: apiVersionCodec, kind: t.literal(kind), metadata: objectMetaCodec, spec }),
      // status is written by tuna and never read back: any object is fine.
      t.partial({ status: t.UnknownRecord }),
    ],
    kind,
  );
}
