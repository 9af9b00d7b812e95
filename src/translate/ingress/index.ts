import type { SnapshotIndex } from '../common/index-snapshot.js';
import type { TranslateOptions, TranslatorOutput } from '../types.js';

/** translateIngresses — not implemented yet. */
export function translateIngresses(_index: SnapshotIndex, _options: TranslateOptions): TranslatorOutput {
  return { fragments: [], statuses: [] };
}
