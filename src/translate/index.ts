/** Translators: pure functions from a Snapshot to one route graph and the statuses to write. */
import { translateCrds } from './crd/index.js';
import { applyBackendTlsPolicies, translateGatewayApi } from './gateway/index.js';
import { translateIngresses } from './ingress/index.js';
import { mergeFragments } from './merge.js';
import { translateLoadBalancerServices } from './service/index.js';
import { applyRoutePolicies } from './policy/index.js';
import { indexSnapshot } from './common/index-snapshot.js';
import { defaultTranslateOptions } from './types.js';
import type { Snapshot, TranslateOptions, TranslateResult } from './types.js';

export * from './types.js';
export { apiGroupOf, snapshotFromObjects, snapshotKey } from './snapshot.js';
export { FINALIZED_KINDS, GATEWAY_GROUP, KINDS, ROUTE_KINDS, STREAM_ROUTE_KINDS, isFinalizedKind, isGroupKind, isKind, kindOf, refersTo } from './kinds.js';
export { GATEWAY_REASONS, TUNA_REASONS, addEvent, condition, normal, upsert, upsertInPlace, warning } from './common/status.js';
export type { ConditionReason, ConditionStatus, GatewayReason, TunaReason } from './common/status.js';
export type { CrdKind, FinalizedKind, GatewayRouteRole, HttpRouteKind, KindEntry, KindLike, KindName, KindRow, Reader, RouteKind, SnapshotKey, StreamRouteKind } from './kinds.js';

/**
 * translateSnapshot runs every translator over one snapshot and merges their fragments. It is pure:
 * the same objects in any order give the same result, and a user's mistake becomes a status
 * condition, never an exception.
 */
export function translateSnapshot(snapshot: Snapshot, options: Partial<TranslateOptions> = {}): TranslateResult {
  const opts = { ...defaultTranslateOptions, ...options };
  const index = indexSnapshot(snapshot);
  const outputs = [
    translateIngresses(index, opts),
    translateLoadBalancerServices(index, opts),
    translateGatewayApi(index, opts),
    translateCrds(index, opts),
  ];
  const merged = mergeFragments(
    outputs.flatMap((o) => o.fragments),
    outputs.flatMap((o) => o.statuses),
  );
  return applyBackendTlsPolicies(index, opts, applyRoutePolicies(index, opts, merged));
}
export { referencedSecrets } from './referenced-secrets.js';
export { checkTlsPair } from './common/tls-pair.js';
export { IncrementalTranslation, fingerprintOf } from './incremental.js';
export type { TranslationStats } from './incremental.js';
