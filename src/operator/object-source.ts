import type { KubernetesObject } from '@kubernetes/client-node';
import type { KnowsOwnerGone } from './edge-reconciler.js';
import { CodedError } from '../model/index.js';
import type { TunaCode } from '../model/index.js';

/**
 * ObjectSource is what the operator's loop reads the cluster from (KubeObjects; a fake in unit
 * tests). Its `hasSynced` is the sync gate: until every watched kind has been listed, the cache's
 * silence about an object means nothing, and a leader acting on it would release every address
 * it holds (controller-runtime waits for the cache to sync the same way).
 */
export interface ObjectSource {
  /** onChange registers a callback for "some object changed" */
  onChange(callback: () => void): void;
  /** start lists every kind (resolving once each is listed or found absent) and watches them */
  start(): Promise<void>;
  stop(): Promise<void>;
  /** objects returns every cached object, stamped with its apiVersion and kind */
  objects(): KubernetesObject[];
  /** hasSynced tells whether every kind has been listed or found absent */
  hasSynced(): boolean;
  /** hasListed tells whether a kind (API group, '' for core) is listed and watched; false for an absent kind */
  hasListed(group: string, kind: string): boolean;
  /** absentKinds names the optional kinds the API does not serve */
  absentKinds(): string[];
}

/** CacheNotSyncedError: a sync was asked for before every watched kind had been listed. */
export class CacheNotSyncedError extends CodedError<TunaCode> {
  constructor() {
    super('TUNA_CACHE_NOT_SYNCED', 'the object cache has not listed every watched kind yet: nothing is reconciled before it has');
  }
}

/**
 * knowsOwnerGoneFrom vouches for an owner's absence from what the cache has listed: its kind is
 * listed, or, for an owner of unknown kind, every kind is (no optional kind absent).
 */
export function knowsOwnerGoneFrom(objects: ObjectSource): KnowsOwnerGone {
  return (owner) => {
    if (!objects.hasSynced()) return false;
    return owner === undefined ? objects.absentKinds().length === 0 : objects.hasListed(owner.group, owner.kind);
  };
}
