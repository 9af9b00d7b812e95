import { readFileSync } from 'node:fs';

/**
 * packageVersion is tuna's version: the `version` of the package.json one level above this file's
 * folder (src/cli → the checkout's, dist/cli → the one an image or a package ships beside dist/).
 */
export function packageVersion(): string {
  const text = readFileSync(new URL('../../package.json', import.meta.url), 'utf8');
  const version = (JSON.parse(text) as { version?: unknown }).version;
  return typeof version === 'string' ? version : 'unknown';
}
