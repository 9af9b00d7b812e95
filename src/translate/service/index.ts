import type { SnapshotIndex } from '../common/index-snapshot.js';
import type { TranslateOptions, TranslatorOutput } from '../types.js';

/** translateLoadBalancerServices — not implemented yet. */
export function translateLoadBalancerServices(_index: SnapshotIndex, _options: TranslateOptions): TranslatorOutput {
  return { fragments: [], statuses: [] };
}
