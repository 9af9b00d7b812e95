import { compareStrings } from '../../model/index.js';
import { createdOf, namespaceOf } from '../common/meta.js';
import { asKube } from './kube-object.js';
import type { GatewayApiObject } from './kube-object.js';
import { isKind } from '../kinds.js';

/**
 * keepOneCopy returns a list with one object per `namespace/name` (manifest files can repeat an
 * object; the API server cannot). The oldest copy is kept; with equal timestamps, the first by
 * content, so the choice never depends on input order. `repeated` collects the keys that had
 * copies, for a Warning on the object.
 */
export function keepOneCopy<T extends GatewayApiObject>(list: T[], repeated: Set<string>): T[] {
  const byKey = new Map<string, T>();
  for (const obj of list) {
    const key = keyOf(obj);
    const prior = byKey.get(key);
    if (prior === undefined) {
      byKey.set(key, obj);
      continue;
    }
    repeated.add(key);
    if (isPreferred(obj, prior)) byKey.set(key, obj);
  }
  return repeated.size === 0 ? list : [...byKey.values()];
}

/** keyOf gives `<kind>/<namespace>/<name>` of a Gateway API object. */
export function keyOf(obj: GatewayApiObject): string {
  const k = asKube(obj);
  const ns = obj.metadata?.namespace === undefined && isKind(obj, 'GatewayClass') ? '' : namespaceOf(k);
  return `${obj.kind ?? ''}/${ns}/${obj.metadata?.name ?? ''}`;
}

function isPreferred(a: GatewayApiObject, b: GatewayApiObject): boolean {
  const ca = createdOf(asKube(a));
  const cb = createdOf(asKube(b));
  if (ca !== cb) return ca !== '' && (cb === '' || ca < cb);
  return compareStrings(JSON.stringify(a), JSON.stringify(b)) < 0;
}
