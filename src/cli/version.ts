import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from './package-root.js';

/**
 * packageVersion is tuna's version: the `version` of the nearest package.json above this file
 * (src/cli → the checkout's, dist/cli → the one an image or a package ships beside dist/).
 */
export function packageVersion(): string {
  const text = readFileSync(join(packageRoot(import.meta.url), 'package.json'), 'utf8');
  const version = (JSON.parse(text) as { version?: unknown }).version;
  return typeof version === 'string' ? version : 'unknown';
}
