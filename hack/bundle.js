// hack/bundle.js — bundles the CLI (src/cli/main.ts and every module it imports, packages
// included) into <dist>/cli/main.js plus the chunks of what it imports lazily, for `npm run build`,
// the images (Dockerfile, hack/image.sh) and the bench.
//
// Why (docs/tunnel-performance.md §11.2, attempt E): Node's ESM loader resolves, reads and links
// every module file on its own, and that work was most of a fresh `tuna http`'s start; one file per
// lazily loaded part does it a few dozen times instead of hundreds. The commands' dynamic imports
// stay lazy (code splitting), so `tuna http` still loads neither the edge, the operator nor the
// Kubernetes client. Chunks sit beside main.js in <dist>/cli/, the depth of the files they come
// from, so paths found from import.meta.url (../../package.json) hold in the bundle too.
//
// Left outside the bundle, loaded from node_modules when first used: @kubernetes/client-node (the
// operator's; large, and it requires optional modules at run time) and pg (the PostgreSQL store;
// it requires pg-native when asked). tsc still emits dist/ for type checking and for reading; the
// bundle replaces its dist/cli/main.js.
//
// Usage: node hack/bundle.js [dist]   (default: dist beside this script's checkout)
import { build } from 'esbuild';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('..', import.meta.url));
const dist = resolve(process.argv[2] ?? join(repo, 'dist'));
const outdir = join(dist, 'cli');
mkdirSync(outdir, { recursive: true });
// chunks of an earlier bundle must not ship beside this one
for (const f of readdirSync(outdir, { withFileTypes: true })) if (f.isFile() && /^chunk-[A-Z0-9]+\.js$/.test(f.name)) rmSync(join(outdir, f.name));

await build({
  entryPoints: { main: join(repo, 'src/cli/main.ts') },
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node24',
  tsconfig: join(repo, 'tsconfig.build.json'),
  chunkNames: 'chunk-[hash]',
  external: ['@kubernetes/client-node', 'pg'],
  // No keepNames: it wraps every named closure in a __name() call each time it is created, i.e.
  // per request on the hot path (1.3 % of the agent's CPU in a profile). Without it esbuild renames
  // only a name that collides inside a chunk; the error classes keep theirs (their `name` is
  // new.target.name, which logs print), and tests/e2e/cli-bundle.test.ts checks that.
  // the CommonJS packages in the bundle (tsyringe, io-ts, yaml …) call require for Node's built-ins
  banner: { js: "import { createRequire as __tunaCreateRequire } from 'node:module'; const require = __tunaCreateRequire(import.meta.url);" },
  logLevel: 'warning',
});
