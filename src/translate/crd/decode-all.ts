/**
 * Decoding the snapshot's tuna.dev objects. The snapshot's lists are typed, but their content comes
 * from files or the API server and is checked here with the codecs before anything trusts it.
 */
import type { DecodeResult } from '../../codec/index.js';
import type { KubeObject, StatusBook } from '../common/meta.js';
import type { ReservingKind } from './status.js';
import { byAge, rejectObject } from './status.js';

/** hasName says whether u looks enough like an object to carry a status (it has a metadata.name). */
function hasName(u: unknown): u is KubeObject {
  if (typeof u !== 'object' || u === null) return false;
  const meta = (u as { metadata?: unknown }).metadata;
  return typeof meta === 'object' && meta !== null && typeof (meta as { name?: unknown }).name === 'string' && (meta as { name: string }).name !== '';
}

/**
 * decodeAll decodes every object of one kind; those that fail get `Accepted=False` reason
 * `InvalidSpec` with the decode errors, and an object without a name (nothing to write a status
 * to) is skipped. The result is sorted oldest first (see byAge), so later steps are order-free.
 */
export function decodeAll<A extends KubeObject>(
  items: readonly unknown[],
  kind: ReservingKind,
  decode: (u: unknown) => DecodeResult<A>,
  book: StatusBook,
): A[] {
  const out: A[] = [];
  for (const item of items) {
    if (!hasName(item)) continue;
    const result = decode(item);
    if (result.ok) out.push(result.value);
    else rejectObject(book, item, kind, { reason: 'InvalidSpec', message: `invalid ${kind}: ${result.errors.join('; ')}` });
  }
  return out.sort(byAge);
}
