import type { V1ConfigMap, V1Namespace, V1Secret, V1Service } from '@kubernetes/client-node';
import { stableStringify } from '../../model/index.js';
import type { Snapshot } from '../types.js';
import { nameKey } from './meta.js';

/** SnapshotIndex gives constant-time lookups over a snapshot; built once per translation. */
export interface SnapshotIndex {
  snapshot: Snapshot;
  services: Map<string, V1Service>;
  secrets: Map<string, V1Secret>;
  /** ConfigMaps carry only their `ca.crt` key (the table of kinds' redact) */
  configMaps: Map<string, V1ConfigMap>;
  namespaces: Map<string, V1Namespace>;
}

/** indexSnapshot builds the lookup maps (keys are `<namespace>/<name>`, namespaces by name). */
export function indexSnapshot(snapshot: Snapshot): SnapshotIndex {
  return {
    snapshot,
    services: uniqueBy(snapshot.services, nameKey),
    secrets: uniqueBy(snapshot.secrets, nameKey),
    configMaps: uniqueBy(snapshot.configMaps, nameKey),
    namespaces: uniqueBy(snapshot.namespaces, (n) => n.metadata?.name ?? ''),
  };
}

/**
 * uniqueBy maps objects by key. An API server never holds two objects with one name, but manifest
 * files can: the one that serialises first wins, so the choice never depends on input order.
 */
function uniqueBy<T>(items: T[], keyOf: (item: T) => string): Map<string, T> {
  const map = new Map<string, T>();
  for (const item of items) {
    const key = keyOf(item);
    const prior = map.get(key);
    if (prior === undefined || stableStringify(item) < stableStringify(prior)) map.set(key, item);
  }
  return map;
}
