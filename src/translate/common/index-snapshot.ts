import type { V1Namespace, V1Secret, V1Service } from '@kubernetes/client-node';
import type { Snapshot } from '../types.js';
import { nameKey } from './meta.js';

/** SnapshotIndex gives constant-time lookups over a snapshot; built once per translation. */
export interface SnapshotIndex {
  snapshot: Snapshot;
  services: Map<string, V1Service>;
  secrets: Map<string, V1Secret>;
  namespaces: Map<string, V1Namespace>;
}

/** indexSnapshot builds the lookup maps (keys are `<namespace>/<name>`, namespaces by name). */
export function indexSnapshot(snapshot: Snapshot): SnapshotIndex {
  return {
    snapshot,
    services: new Map(snapshot.services.map((s) => [nameKey(s), s])),
    secrets: new Map(snapshot.secrets.map((s) => [nameKey(s), s])),
    namespaces: new Map(snapshot.namespaces.map((n) => [n.metadata?.name ?? '', n])),
  };
}
