#!/usr/bin/env node
// bin/tuna.js — the `tuna` command (package.json "bin").
//
// It runs the compiled CLI, dist/cli/main.js, built by `npm run build`. In a source checkout
// without a build it falls back to the TypeScript sources through tsx (a devDependency), so
// `npx tuna …` works in a fresh clone too; see docs/cli.md.
import { existsSync } from 'node:fs';

const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  process.stderr.write(`tuna needs Node.js 24 or later (this is ${process.version}); run it through hack/node24.sh\n`);
  process.exit(1);
}

const dist = new URL('../dist/cli/main.js', import.meta.url);
let main;
if (existsSync(dist)) {
  main = await import(dist.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  main = await import(new URL('../src/cli/main.ts', import.meta.url).href);
}
main.runMain(process.argv.slice(2));
