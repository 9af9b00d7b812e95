// main.ts — `npm run soak [-- --minutes N]`: the chaos soak against the test cluster (started here
// when it is not running, and stopped again). Run it under the cluster lock, as the cluster tests
// are: one test cluster at a time on a machine. Exit status 1 when a target or invariant failed.
import { parseArgs } from 'node:util';
import { runScript } from '../cluster/cluster-env.js';
import { clusterUp } from '../cluster/hooks.js';
import { runSoak } from './soak.js';

const { values } = parseArgs({ options: { minutes: { type: 'string', default: '20' }, rate: { type: 'string', default: '30' } } });
const minutes = Number(values.minutes);
const rate = Number(values.rate);
if (!Number.isFinite(minutes) || minutes < 0 || minutes > 24 * 60 || !Number.isFinite(rate) || rate <= 0 || rate > 200) {
  console.error('usage: npm run soak -- [--minutes N (0: the short form; at most 1440)] [--rate REQUESTS_PER_SECOND (at most 200)]');
  process.exit(2);
}
const log = (line: string) => console.error(`${new Date().toISOString().slice(11, 19)} soak: ${line}`);
const started = await clusterUp();
let ok: boolean;
try {
  const report = await runSoak({ minutes, ratePerSecond: rate, settleMs: 15_000, log });
  console.log(report.text);
  ok = report.ok;
} finally {
  if (started) await runScript('hack/cluster/down.sh', 120_000);
}
process.exit(ok ? 0 : 1);
