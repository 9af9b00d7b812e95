/**
 * npm run bench [-- part [--flag value ...] ...]: runs the named benchmark parts (default: all but
 * scale, which needs the test cluster) and rewrites their sections of docs/benchmarks.md. Flags
 * after a part's name are that part's (`npm run bench -- scale --hosts 100,1000`). It prints an
 * estimate of each part's time first (bench/plan.ts); the tunnel part installs the tools it misses
 * with hack/bench-tools.sh (bench/tunnel/tools.ts ensureTools).
 */
import { runScaleBench } from './scale/index.js';
import { runTranslateBench } from './translate.js';
import { runTunnelBench } from './tunnel/index.js';
import { runBindingsBench } from './bindings/index.js';
import { runPoliciesBench } from './policies.js';
import { runAccessLogBench } from './access-log.js';
import { runTracingBench } from './tracing.js';
import { runSyncBench } from './scale/sync.js';
import { formatPlan, planParts } from './plan.js';

const parts: Record<string, (args: readonly string[]) => void | Promise<void>> = {
  translate: () => runTranslateBench(),
  tunnel: () => runTunnelBench(),
  scale: (args) => runScaleBench(args),
  // not in the default set: it prints its table for docs/tunnel-performance.md, and takes minutes
  bindings: () => runBindingsBench(),
  // not in the default set: the per-request cost of route policies, for docs/policies.md and its section of docs/benchmarks.md
  policies: () => runPoliciesBench(),
  // not in the default set: prints the per-exchange cost of the access log for docs/dataplane.md
  'access-log': () => runAccessLogBench(),
  // not in the default set: prints the per-exchange cost of traces for docs/dataplane.md
  tracing: () => runTracingBench(),
  // not in the default set: the operator's sync in one process (no cluster), for the scale notes
  sync: (args) => runSyncBench(args),
};
const defaults = ['translate', 'tunnel'];

const wanted: { name: string; args: string[] }[] = [];
for (const arg of process.argv.slice(2)) {
  if (arg.startsWith('--') && wanted.length > 0) wanted.at(-1)!.args.push(arg);
  else if (wanted.length > 0 && wanted.at(-1)!.args.at(-1)?.startsWith('--') && wanted.at(-1)!.args.length % 2 === 1) wanted.at(-1)!.args.push(arg);
  else wanted.push({ name: arg, args: [] });
}
const chosen = wanted.length > 0 ? wanted : defaults.map((name) => ({ name, args: [] }));
for (const { name } of chosen) {
  if (!parts[name]) {
    console.error(`unknown benchmark part ${name}; known: ${Object.keys(parts).join(', ')}`);
    process.exit(2);
  }
}
// how long the run will take, before it starts
for (const line of formatPlan(planParts(chosen.map((p) => p.name)))) console.log(line);
for (const { name, args } of chosen) {
  const run = parts[name]!;
  console.log(`== ${name}`);
  await run(args);
}
