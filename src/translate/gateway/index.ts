import type { SnapshotIndex } from '../common/index-snapshot.js';
import type { TranslateOptions, TranslatorOutput } from '../types.js';

/** translateGatewayApi — not implemented yet. */
export function translateGatewayApi(_index: SnapshotIndex, _options: TranslateOptions): TranslatorOutput {
  return { fragments: [], statuses: [] };
}
