import type { V1ObjectMeta } from '@kubernetes/client-node';
import type { ObjectRef, ObjectStatus, SourceRef } from '../../model/index.js';
import type { KindName } from '../kinds.js';

/** KubeObject is the part of any Kubernetes object the translators look at generically. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: V1ObjectMeta;
}

/** groupOf returns the API group of an apiVersion ('' for the core group). */
export function groupOf(apiVersion: string | undefined): string {
  if (!apiVersion || !apiVersion.includes('/')) return '';
  return apiVersion.slice(0, apiVersion.indexOf('/'));
}

/** refOf returns the ObjectRef of an object; `kind` is passed when the object may lack it. */
export function refOf(obj: KubeObject, kind?: KindName, group?: string): ObjectRef {
  const ns = obj.metadata?.namespace;
  return {
    group: group ?? groupOf(obj.apiVersion),
    kind: kind ?? obj.kind ?? '',
    ...(ns ? { namespace: ns } : {}),
    name: obj.metadata?.name ?? '',
  };
}

/** sourceOf returns the SourceRef of an object, optionally naming a section inside it. */
export function sourceOf(ref: ObjectRef, section?: string): SourceRef {
  return { ...ref, ...(section !== undefined ? { section } : {}) };
}

/** createdOf returns the creation timestamp as RFC 3339 text ('' when unknown). */
export function createdOf(obj: KubeObject): string {
  const t = obj.metadata?.creationTimestamp as unknown;
  if (t instanceof Date) return t.toISOString().replace(/\.\d{3}Z$/, 'Z');
  return typeof t === 'string' ? t : '';
}

/** namespaceOf returns the object's namespace, `default` when absent (as the API server would). */
export function namespaceOf(obj: KubeObject): string {
  return obj.metadata?.namespace || 'default';
}

/** nameKey returns `<namespace>/<name>`. */
export function nameKey(obj: KubeObject): string {
  return `${namespaceOf(obj)}/${obj.metadata?.name ?? ''}`;
}

/** generationOf returns metadata.generation when set. */
export function generationOf(obj: KubeObject): number | undefined {
  return obj.metadata?.generation;
}

/** StatusBook collects ObjectStatus entries by object while a translator runs. */
export class StatusBook {
  private readonly byKey = new Map<string, ObjectStatus>();

  /** entry returns the status of an object, creating it on first use. */
  entry(obj: KubeObject, ref: ObjectRef = refOf(obj)): ObjectStatus {
    const key = `${ref.group}/${ref.kind}/${ref.namespace ?? ''}/${ref.name}`;
    let s = this.byKey.get(key);
    if (!s) {
      const gen = generationOf(obj);
      s = { ref, ...(gen !== undefined ? { observedGeneration: gen } : {}), conditions: [], events: [] };
      this.byKey.set(key, s);
    }
    return s;
  }

  /** all returns every status collected. */
  all(): ObjectStatus[] {
    return [...this.byKey.values()];
  }
}
