/**
 * npm run bench [-- part ...]: runs the named benchmark parts (default: all) and rewrites their
 * sections of docs/benchmarks.md.
 */
import { runTranslateBench } from './translate.js';
import { runTunnelBench } from './tunnel/index.js';

const parts: Record<string, () => void | Promise<void>> = {
  translate: () => runTranslateBench(),
  tunnel: () => runTunnelBench(),
};

const wanted = process.argv.slice(2);
for (const name of wanted.length > 0 ? wanted : Object.keys(parts)) {
  const run = parts[name];
  if (!run) {
    console.error(`unknown benchmark part ${name}; known: ${Object.keys(parts).join(', ')}`);
    process.exit(2);
  }
  console.log(`== ${name}`);
  await run();
}
