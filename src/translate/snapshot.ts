import { emptySnapshot, kindOf } from './kinds.js';
import type { Snapshot, SnapshotKey } from './kinds.js';

/** apiGroupOf is the API group of an `apiVersion` (`networking.k8s.io/v1` → `networking.k8s.io`, `v1` → ''). */
export function apiGroupOf(apiVersion: string | undefined): string {
  const api = apiVersion ?? '';
  return api.includes('/') ? api.slice(0, api.indexOf('/')) : '';
}

/**
 * snapshotKey returns the snapshot list an object belongs to (by the table of kinds, kinds.ts), or
 * undefined for kinds tuna ignores. Any version of a kind is accepted: each translator's codec says
 * what it needs, and a tuna.dev object of a version tuna does not serve gets a status saying so.
 */
export function snapshotKey(obj: { apiVersion?: string; kind?: string }): SnapshotKey | undefined {
  return kindOf(apiGroupOf(obj.apiVersion), obj.kind ?? '')?.key;
}

/**
 * snapshotFromObjects sorts plain objects (from YAML files or a watch cache) into a Snapshot.
 * Kinds tuna does not read are returned in `ignored`. Secret data is dropped here (the table's
 * `redact`) so that no key material ever reaches a translator.
 */
export function snapshotFromObjects(objects: unknown[]): { snapshot: Snapshot; ignored: unknown[] } {
  const snapshot = emptySnapshot();
  const ignored: unknown[] = [];
  for (const obj of objects) {
    if (obj === null || typeof obj !== 'object') {
      ignored.push(obj);
      continue;
    }
    const o = obj as { apiVersion?: string; kind?: string };
    const row = kindOf(apiGroupOf(o.apiVersion), o.kind ?? '');
    if (!row) {
      ignored.push(obj);
      continue;
    }
    const value = 'redact' in row ? row.redact(o) : o;
    (snapshot[row.key] as unknown[]).push(value);
  }
  return { snapshot, ignored };
}
