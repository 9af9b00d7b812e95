/**
 * npm run bench -- tracing: the CPU cost per HTTP exchange of the data plane's traces, in process
 * (no network), beside no tracing at all (the default: no observer, the SDK not loaded). What is
 * measured is the request path's part: extracting the traceparent, starting and ending the span,
 * writing the backend's traceparent. The spans go to an exporter that drops them, so the batch's
 * OTLP encoding and send (off the request path, once a second) are not in the figure. Prints a table
 * for docs/dataplane.md; rewrites nothing.
 */
import type { ExchangeObserver } from '../src/dataplane/observer.js';
import { startTracing } from '../src/dataplane/tracing.js';
import type { TracingHandle } from '../src/dataplane/tracing.js';
import { perExchange } from './access-log.js';

/** dropping is an exporter that accepts every batch and keeps nothing. */
const dropping = {
  export: (_spans: unknown[], done: (r: { code: number }) => void) => done({ code: 0 }),
  shutdown: () => Promise.resolve(),
};

/** runTracingBench prints ns per exchange for each variant, best of fifteen interleaved runs. */
export async function runTracingBench(): Promise<void> {
  const start = (sample: number): Promise<TracingHandle> => startTracing({ endpoint: 'http://127.0.0.1:1/v1/traces', serviceName: 'bench', sample, exporter: dropping as never, batchDelayMs: 10 });
  const handles = [await start(1), await start(0.01), await start(0)];
  const variants: [string, ExchangeObserver | undefined][] = [
    ['no tracing (default)', undefined],
    ['traces, every request sampled', handles[0]!.observer],
    ['traces, sample 0.01', handles[1]!.observer],
    ['traces, sample 0 (propagation only)', handles[2]!.observer],
  ];
  const n = 20_000;
  const round = async (o: ExchangeObserver | undefined, k: number): Promise<number> => {
    const ns = perExchange(o, k);
    await Promise.all(handles.map((h) => h.flush())); // the batch queue (2,048 spans) must not drop this round's spans unseen
    return ns;
  };
  for (const [, o] of variants) await round(o, 2_000); // warm-up
  const best = new Map<string, number>();
  for (let i = 0; i < 15; i++) for (const [name, o] of variants) best.set(name, Math.min(best.get(name) ?? Infinity, await round(o, n)));
  await Promise.all(handles.map((h) => h.close()));
  const base = best.get('no tracing (default)')!;
  console.log('| variant | ns per exchange | added by tracing |');
  console.log('| --- | --- | --- |');
  for (const [name, ns] of best) console.log(`| ${name} | ${ns.toFixed(0)} | ${ns === base ? '—' : `+${(ns - base).toFixed(0)} ns`} |`);
}
