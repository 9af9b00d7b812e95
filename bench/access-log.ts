/**
 * npm run bench -- access-log: the CPU cost per HTTP exchange of the data plane's access log, in
 * process (no network): what the observer adds to one exchange's respond, body writes and close,
 * and the line's formatting, to a sink that drops it (the destination's own cost is the
 * terminal's or the disk's). Prints a table for docs/dataplane.md; rewrites nothing.
 */
import type { Readable, Writable } from 'node:stream';
import { AccessLog } from '../src/dataplane/access-log.js';
import type { Downstream } from '../src/dataplane/exchange.js';
import type { ExchangeObserver } from '../src/dataplane/observer.js';
import type { TunnelStreamContext } from '../src/wire/index.js';

const context: TunnelStreamContext = { bindingId: 'binding/host/app.test', publicPort: 443, publicProtocol: 'https', clientAddress: '198.51.100.7', requestId: 'bench-1' };
const chunk = Buffer.alloc(1024);

/** exchange is the least a Downstream needs here: calls, no streams (their cost is not the log's). */
function exchange(): Downstream & { close(): void } {
  let onClose: (() => void) | undefined;
  const sink = { write: (_c: unknown) => true, end: (_c?: unknown) => sink, emit: (_e: string) => true };
  return {
    method: 'GET',
    authority: 'app.test',
    target: '/items?page=2&access_token=abc',
    headers: {},
    body: sink as unknown as Readable,
    hasBody: false,
    out: sink as unknown as Writable,
    headersSent: false,
    isClosed: false,
    isAborted: false,
    respond: () => undefined,
    onClose: (cb) => void (onClose = cb),
    destroy: () => undefined,
    close: () => onClose?.(),
  };
}

/** perExchange runs `n` exchanges (respond, two body writes, end, close) and returns nanoseconds each (bench/tracing.ts uses it too). */
export function perExchange(observer: ExchangeObserver | undefined, n: number): number {
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    const ds = exchange();
    observer?.observe(ds, context);
    observer?.routed?.(ds, 'ingress/default/web/rule/0/match/0');
    ds.respond(200, {});
    ds.out.write(chunk);
    ds.out.end(chunk);
    ds.close();
  }
  return Number(process.hrtime.bigint() - start) / n;
}

/** runAccessLogBench prints ns per exchange for each variant, best of fifteen interleaved runs. */
export function runAccessLogBench(): void {
  let lines = 0;
  const write = (line: string): void => void (lines += line.length > 0 ? 1 : 0);
  const variants: [string, ExchangeObserver | undefined][] = [
    ['no access log', undefined],
    ['json, every request', new AccessLog({ write })],
    ['template, every request', new AccessLog({ write, format: '$client $method $host$path $status $bytesOut $durationMs' })],
    ['json, sample 0.1', new AccessLog({ write, sample: 0.1 })],
  ];
  const n = 50_000;
  for (const [, o] of variants) perExchange(o, 5_000); // warm-up
  const best = new Map<string, number>();
  for (let i = 0; i < 15; i++) for (const [name, o] of variants) best.set(name, Math.min(best.get(name) ?? Infinity, perExchange(o, n)));
  const base = best.get('no access log')!;
  console.log(`(${lines} lines formatted)`);
  console.log('| variant | ns per exchange | added by the access log |');
  console.log('| --- | --- | --- |');
  for (const [name, ns] of best) console.log(`| ${name} | ${ns.toFixed(0)} | ${name === 'no access log' ? '—' : `+${(ns - base).toFixed(0)} ns`} |`);
}
