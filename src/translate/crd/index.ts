import type { SnapshotIndex } from '../common/index-snapshot.js';
import type { TranslateOptions, TranslatorOutput } from '../types.js';

/** translateCrds — not implemented yet. */
export function translateCrds(_index: SnapshotIndex, _options: TranslateOptions): TranslatorOutput {
  return { fragments: [], statuses: [] };
}
