/**
 * Load generators of the tunnel benchmark and the parsers of their output. All are C programs
 * (wrk, h2load, curl) so that the client costs the same, small, CPU for every contender and no
 * garbage collector or timer jitter of ours lands in the figures (docs/benchmarking.md).
 */
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { BenchResultError } from './errors.js';
import type { Target } from './net.js';
import { targetUrl } from './net.js';
import type { ProcessGroup } from './processes.js';

/** WrkResult is wrk's throughput and its error counts. */
export interface WrkResult {
  requestsPerSecond: number;
  requests: number;
  /** responses that were not 2xx/3xx plus socket errors: any > 0 makes the figure suspect */
  errors: number;
}

/** parseWrk reads wrk's summary ("Requests/sec:", "Non-2xx or 3xx responses:", "Socket errors:"). */
export function parseWrk(text: string): WrkResult {
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(text);
  const total = /(\d+) requests in /.exec(text);
  if (!rps || !total) throw new BenchResultError(`wrk output has no Requests/sec line: ${text.slice(0, 400)}`);
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(text)?.[1] ?? 0);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(text);
  const socketErrors = socket ? socket.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0;
  return { requestsPerSecond: Number(rps[1]), requests: Number(total[1]), errors: non2xx + socketErrors };
}

/**
 * hostHeader is the header argument that makes a load tool send `target.host` as the Host. h2load
 * takes it as `:authority` even over HTTP/1.1 (a `Host:` header would be sent in addition to its
 * own, and frps answers such requests 400).
 */
function hostHeader(target: Target, tool: 'wrk' | 'h2load'): string[] {
  if (!target.host) return [];
  return ['-H', tool === 'h2load' ? `:authority: ${target.host}` : `Host: ${target.host}`];
}

/** runWrk drives `/1k` with `connections` keep-alive HTTP/1.1 connections for `seconds` (closed loop). */
export async function runWrk(group: ProcessGroup, wrk: string, target: Target, connections: number, threads: number, seconds: number): Promise<WrkResult> {
  const args = ['-t', String(threads), '-c', String(connections), '-d', `${seconds}s`, '--timeout', '5s', ...hostHeader(target, 'wrk'), targetUrl(target, '/1k')];
  const res = await group.run('wrk', wrk, args, (seconds + 15) * 1000);
  if (res.code !== 0) throw new BenchResultError(`wrk exited ${res.code}: ${res.stderr.slice(0, 400)}`);
  return parseWrk(res.stdout);
}

/** LatencyResult holds exact percentiles over every request of a fixed-rate run, in milliseconds. */
export interface LatencyResult {
  p50: number;
  p99: number;
  requests: number;
  /** requests that did not answer 200 */
  errors: number;
  /** requests per second actually completed (the offered rate if the contender keeps up) */
  achievedRate: number;
}

/** percentile returns the value at rank ceil(q·n) of sorted values (the nearest-rank method). */
export function percentile(sorted: number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length)));
  return sorted[rank - 1] as number;
}

/**
 * parseH2loadLog reads h2load's `--log-file` (tab-separated: start µs since epoch, status, µs to
 * the end of the response) into latency percentiles over every logged request.
 */
export function parseH2loadLog(text: string): LatencyResult {
  const durations: number[] = [];
  let errors = 0;
  let first = Number.POSITIVE_INFINITY;
  let last = 0;
  for (const line of text.split('\n')) {
    const [start, status, micros] = line.split('\t');
    if (start === undefined || status === undefined || micros === undefined) continue;
    const s = Number(start);
    const d = Number(micros);
    if (!Number.isFinite(s) || !Number.isFinite(d)) continue;
    if (status !== '200') errors++;
    durations.push(d / 1000);
    first = Math.min(first, s);
    last = Math.max(last, s + d);
  }
  if (durations.length === 0) throw new BenchResultError('h2load log holds no requests');
  durations.sort((a, b) => a - b);
  const spanSeconds = (last - first) / 1e6;
  return {
    p50: percentile(durations, 0.5),
    p99: percentile(durations, 0.99),
    requests: durations.length,
    errors,
    achievedRate: spanSeconds > 0 ? durations.length / spanSeconds : 0,
  };
}

/**
 * runFixedRate offers `rate` req/s to `/1k` with h2load over HTTP/1.1 keep-alive: `clients`
 * connections each sending `rate / clients` req/s on their own schedule, for `seconds` after a
 * one-second warm-up, and computes the percentiles from h2load's per-request log.
 */
export async function runFixedRate(group: ProcessGroup, h2load: string, target: Target, rate: number, clients: number, seconds: number, tmp: string): Promise<LatencyResult> {
  const log = join(tmp, `h2load-${process.hrtime.bigint()}.log`);
  const args = ['--h1', '-c', String(clients), '-t', '1', '--rps', String(rate / clients), '-D', String(seconds), '--warm-up-time', '1', '--log-file', log, ...hostHeader(target, 'h2load'), targetUrl(target, '/1k')];
  try {
    const res = await group.run('h2load', h2load, args, (seconds + 20) * 1000);
    if (res.code !== 0) throw new BenchResultError(`h2load exited ${res.code}: ${(res.stderr || res.stdout).slice(0, 400)}`);
    return parseH2loadLog(await readFile(log, 'utf8'));
  } finally {
    await rm(log, { force: true });
  }
}

/** TransferResult is one timed 1 GiB-class transfer. */
export interface TransferResult {
  megabytesPerSecond: number;
  seconds: number;
}

/** parseCurlTimes reads the `-w '%{http_code} %{size_download} %{size_upload} %{time_total}'` line. */
export function parseCurlTimes(text: string): { status: number; downloaded: number; uploaded: number; seconds: number } {
  const line = text.trim().split('\n').pop() ?? '';
  const [status, downloaded, uploaded, seconds] = line.split(' ').map(Number);
  if (status === undefined || downloaded === undefined || uploaded === undefined || seconds === undefined || !Number.isFinite(seconds))
    throw new BenchResultError(`curl printed no timing line: ${text.slice(0, 200)}`);
  return { status, downloaded, uploaded, seconds };
}

const curlFormat = '\n%{http_code} %{size_download} %{size_upload} %{time_total}';

/** runDownload fetches `/bytes/<bytes>` once with curl into /dev/null and checks every byte came. */
export async function runDownload(group: ProcessGroup, curl: string, target: Target, bytes: number, timeoutSeconds: number): Promise<TransferResult> {
  const args = ['-sS', '--max-time', String(timeoutSeconds), '-o', '/dev/null', '-w', curlFormat];
  if (target.host) args.push('-H', `Host: ${target.host}`);
  const res = await group.run('curl', curl, [...args, targetUrl(target, `/bytes/${bytes}`)], (timeoutSeconds + 5) * 1000);
  const t = parseCurlTimes(res.stdout);
  if (res.code !== 0 || t.status !== 200 || t.downloaded !== bytes)
    throw new BenchResultError(`download: curl exit ${res.code}, status ${t.status}, ${t.downloaded} of ${bytes} bytes ${res.stderr.trim()}`);
  return { megabytesPerSecond: bytes / t.seconds / 1e6, seconds: t.seconds };
}

/**
 * runUpload PUTs `bytes` to `/upload` once with bench/tunnel/upload-client.ts in its own process;
 * the backend answers only after draining the body, with the count it received, which must equal
 * `bytes`.
 */
export async function runUpload(group: ProcessGroup, target: Target, bytes: number, timeoutSeconds: number): Promise<TransferResult> {
  const script = join(import.meta.dirname, 'upload-client.ts');
  const args = ['--no-warnings', script, String(target.port), String(bytes), ...(target.host ? [target.host] : [])];
  const res = await group.run('upload-client', process.execPath, args, timeoutSeconds * 1000);
  const m = /\{"status":(\d+),"received":(-?\d+),"seconds":([\d.e+-]+)\}/.exec(res.stdout);
  if (res.code !== 0 || !m || m[1] !== '200' || Number(m[2]) !== bytes)
    throw new BenchResultError(`upload: exit ${res.code}, ${m ? `status ${m[1]}, backend received ${m[2]} of ${bytes} bytes` : 'no result'} ${res.stderr.trim()}`);
  const seconds = Number(m[3]);
  return { megabytesPerSecond: bytes / seconds / 1e6, seconds };
}
