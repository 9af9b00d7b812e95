import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * packageRoot is the folder of tuna's package.json: the nearest folder above `from` (a module's
 * import.meta.url) that holds one. It is found, not counted, because the same code runs from
 * src/cli/commands/ (tsx), dist/cli/commands/ (tsc) and dist/cli/ (the bundle, hack/bundle.js).
 */
export function packageRoot(from: string): string {
  let dir = dirname(fileURLToPath(from));
  for (let depth = 0; depth < 16; depth++) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  throw new Error(`no package.json above ${fileURLToPath(from)}`);
}
