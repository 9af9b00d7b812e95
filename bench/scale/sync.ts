/**
 * npm run bench -- sync [--hosts 1000,10000]: the operator's sync in one process, without a cluster:
 * the same Operator, translators, EdgeReconciler and data plane as `tuna operator`, over a cache of
 * N Ingresses (one host each, one Service: the objects of `npm run bench -- scale`) and a fake edge
 * that answers at once (test/support/fake-edge-control.ts). Per N: the first sync (every binding
 * new), a sync after one new Ingress and one with nothing changed (medians of 5 and 3), and the
 * live JavaScript heap per host after a full GC. Run it with `--cpu-prof` in TUNA_BENCH_NODE_FLAGS'
 * stead (`node --cpu-prof --import tsx bench/index.ts sync`) for the profile docs/benchmarks.md
 * quotes. Prints a Markdown table; it writes nothing (its figures move with the machine's load).
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { loadavg } from 'node:os';
import { DataPlane, StaticEndpointResolver } from '../../src/dataplane/index.js';
import { EdgeReconciler, Operator, TunnelKeys } from '../../src/operator/index.js';
import type { StatusWriter, SyncPhases, SyncResult, WriteReport } from '../../src/operator/index.js';
import { FakeEdgeControl } from '../../test/support/fake-edge-control.js';
import { ChangingObjects, RecordingTunnels } from '../../test/support/operator-fakes.js';

const NAMESPACE = 'scale';

function ingress(i: number): KubernetesObject {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name: `h${i}`, namespace: NAMESPACE, uid: `uid-h${i}`, generation: 1, resourceVersion: String(1000 + i) },
    spec: { ingressClassName: 'tuna', rules: [{ host: `h${i}.scale.example.com`, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'echo', port: { name: 'http' } } } }] } }] },
  } as KubernetesObject;
}

const fixed: KubernetesObject[] = [
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE, uid: 'uid-ns' } } as KubernetesObject,
  { apiVersion: 'networking.k8s.io/v1', kind: 'IngressClass', metadata: { name: 'tuna', uid: 'uid-class' }, spec: { controller: 'tuna.dev/ingress-controller' } } as KubernetesObject,
  { apiVersion: 'v1', kind: 'Service', metadata: { name: 'echo', namespace: NAMESPACE, uid: 'uid-echo' }, spec: { ports: [{ name: 'http', port: 80, targetPort: 8080 }], selector: { app: 'echo' } } } as KubernetesObject,
];

/** AcceptingWriter takes every status at once (the statuses are computed, not PATCHed). */
class AcceptingWriter {
  write(statuses: readonly unknown[]): Promise<WriteReport> {
    return Promise.resolve({ written: statuses.length, unchanged: 0, gone: 0, failed: 0 });
  }
}

interface SyncRow {
  hosts: number;
  firstMs: number;
  oneNewMs: number;
  unchangedMs: number;
  /** CPU time of the process (every thread: the collector's too) during the sync, which a loaded machine moves less than wall time */
  oneNewCpuMs: number;
  unchangedCpuMs: number;
  /** the median of each phase over the syncs after one new Ingress */
  oneNewPhases: SyncPhases;
  heapPerHostKiB: number;
}

/** timed runs `fn` and returns its wall and CPU milliseconds and its result. */
async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; cpuMs: number; result: T }> {
  const cpu = process.cpuUsage();
  const from = performance.now();
  const result = await fn();
  const used = process.cpuUsage(cpu);
  return { ms: performance.now() - from, cpuMs: (used.user + used.system) / 1000, result };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

function medianPhases(all: SyncPhases[]): SyncPhases {
  const keys = Object.keys(all[0]!) as (keyof SyncPhases)[];
  return Object.fromEntries(keys.map((k) => [k, median(all.map((p) => p[k]))])) as unknown as SyncPhases;
}

async function measure(hosts: number): Promise<SyncRow> {
  const objects = new ChangingObjects();
  objects.items = [...fixed, ...Array.from({ length: hosts }, (_, i) => ingress(i))];
  const operator = new Operator({
    objects,
    dataPlane: new DataPlane({ endpoints: new StaticEndpointResolver() }),
    endpoints: new StaticEndpointResolver(),
    tunnels: new RecordingTunnels(),
    writer: new AcceptingWriter() as unknown as StatusWriter,
    // as tuna operator: each sync looks for the Secrets the objects name (these name none)
    secrets: { read: () => Promise.resolve([]), onChange: () => undefined, stop: () => Promise.resolve() },
    reconciler: new EdgeReconciler(new FakeEdgeControl(), new TunnelKeys(), { clusterId: 'bench' }),
    translate: { baseDomain: 'tuna.example.com' },
  });
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const heapBefore = process.memoryUsage().heapUsed;
  const first = await timed(() => operator.start());
  const oneNew: { ms: number; cpuMs: number; result: SyncResult }[] = [];
  for (let k = 0; k < 5; k++) {
    objects.items = [...objects.items, ingress(hosts + k)];
    oneNew.push(await timed(() => operator.sync()));
  }
  const unchanged: { ms: number; cpuMs: number; result: SyncResult }[] = [];
  for (let k = 0; k < 3; k++) unchanged.push(await timed(() => operator.sync()));
  gc?.();
  const heapPerHostKiB = (process.memoryUsage().heapUsed - heapBefore) / (hosts + 5) / 1024;
  await operator.stop();
  return {
    hosts,
    firstMs: first.ms,
    oneNewMs: median(oneNew.map((t) => t.ms)),
    unchangedMs: median(unchanged.map((t) => t.ms)),
    oneNewCpuMs: median(oneNew.map((t) => t.cpuMs)),
    unchangedCpuMs: median(unchanged.map((t) => t.cpuMs)),
    oneNewPhases: medianPhases(oneNew.map((t) => t.result.phases)),
    heapPerHostKiB,
  };
}

/** runSyncBench measures each N in turn and prints the table. */
export async function runSyncBench(args: readonly string[]): Promise<void> {
  let hosts = [1000, 10000];
  for (let i = 0; i < args.length; i += 2) {
    if (args[i] !== '--hosts') throw new Error(`sync bench: unknown flag ${args[i]}; known: --hosts`);
    hosts = (args[i + 1] ?? '').split(',').map(Number);
    if (hosts.some((n) => !Number.isInteger(n) || n < 1 || n > 100_000)) throw new Error('sync bench: --hosts takes numbers from 1 to 100000, comma-separated');
  }
  const load = loadavg()[0]!.toFixed(1);
  const rows: SyncRow[] = [];
  for (const n of hosts) rows.push(await measure(n));
  console.log(`\nIn-process operator sync (fake cache and edge), 1-minute load average ${load} before, ${loadavg()[0]!.toFixed(1)} after:\n`);
  console.log('| hosts | first sync | sync after one new Ingress (median of 5): wall / CPU | sync with nothing changed (median of 3): wall / CPU | live heap per host |');
  console.log('| --- | --- | --- | --- | --- |');
  for (const r of rows)
    console.log(`| ${r.hosts.toLocaleString('en-US')} | ${Math.round(r.firstMs)} ms | ${Math.round(r.oneNewMs)} / ${Math.round(r.oneNewCpuMs)} ms | ${Math.round(r.unchangedMs)} / ${Math.round(r.unchangedCpuMs)} ms | ${r.heapPerHostKiB.toFixed(1)} KiB |`);
  console.log('\nThe sync after one new Ingress by phase (wall ms, medians of 5; the fake edge answers at once):\n');
  console.log('| hosts | read | translate | validate | reconcile | apply | statuses |');
  console.log('| --- | --- | --- | --- | --- | --- | --- |');
  const ms = (n: number): string => n.toFixed(1);
  for (const { hosts: n, oneNewPhases: p } of rows)
    console.log(`| ${n.toLocaleString('en-US')} | ${ms(p.readMs)} | ${ms(p.translateMs)} | ${ms(p.admitMs)} | ${ms(p.reconcileMs)} | ${ms(p.applyMs)} | ${ms(p.statusMs)} |`);
}
