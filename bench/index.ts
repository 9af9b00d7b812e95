/**
 * npm run bench [-- part ...]: runs the named benchmark parts (default: all) and rewrites their
 * sections of docs/benchmarks.md.
 */
import { runTranslateBench } from './translate.js';
import { runTunnelBench } from './tunnel/index.js';
import { runBindingsBench } from './bindings/index.js';

const parts: Record<string, () => void | Promise<void>> = {
  translate: () => runTranslateBench(),
  tunnel: () => runTunnelBench(),
  // not in the default set: it prints its table for docs/tunnel-performance.md, and takes minutes
  bindings: () => runBindingsBench(),
};

const wanted = process.argv.slice(2);
for (const name of wanted.length > 0 ? wanted : Object.keys(parts).filter((p) => p !== 'bindings')) {
  const run = parts[name];
  if (!run) {
    console.error(`unknown benchmark part ${name}; known: ${Object.keys(parts).join(', ')}`);
    process.exit(2);
  }
  console.log(`== ${name}`);
  await run();
}
