/**
 * Loopback helpers for the tunnel benchmark: free ports and bounded HTTP probes. Every address here
 * is 127.0.0.1 (DESIGN.md, network rule).
 */
import { request } from 'node:http';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { BenchTimeoutError } from './errors.js';

/** loopback is the only address the benchmark listens on or connects to. */
export const loopback = '127.0.0.1';

/** freePort asks the kernel for a free loopback port (listen on 0, close, return the number). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, loopback, resolve);
  });
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('freePort: no port');
  return address.port;
}

/** Target is where a contender accepts public requests: a loopback port and the Host it routes on. */
export interface Target {
  port: number;
  /** Host header the contender routes by (frp vhost, tuna edge); undefined sends 127.0.0.1:port */
  host?: string;
}

/** targetUrl is the URL of `path` on a target (the Host header is sent separately). */
export function targetUrl(target: Target, path: string): string {
  return `http://${loopback}:${target.port}${path}`;
}

/** ProbeResult is the status of one request, or the connection error that prevented it. */
export type ProbeResult = { status: number } | { error: string };

/**
 * probe sends one GET on a fresh connection and resolves at the first byte of the response (the
 * status line), so the time it takes is a time to first byte; the body is discarded.
 */
export function probe(target: Target, path: string, timeoutMs = 2000): Promise<ProbeResult> {
  return new Promise((resolve) => {
    const req = request(
      { host: loopback, port: target.port, path, agent: false, headers: target.host ? { host: target.host } : {}, timeout: timeoutMs },
      (res) => {
        resolve({ status: res.statusCode ?? 0 });
        res.resume();
      },
    );
    req.once('timeout', () => req.destroy(new Error('timeout')));
    req.once('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
    req.end();
  });
}

/**
 * waitForStatus polls `path` until it answers 200, every `intervalMs` (after the previous probe
 * ends), for at most `timeoutMs`; it resolves with the milliseconds it took.
 */
export async function waitForStatus(target: Target, path: string, timeoutMs: number, intervalMs = 20): Promise<number> {
  const start = performance.now();
  let last: ProbeResult = { error: 'not probed' };
  while (performance.now() - start < timeoutMs) {
    last = await probe(target, path, Math.max(100, timeoutMs - (performance.now() - start)));
    if ('status' in last && last.status === 200) return performance.now() - start;
    if (intervalMs > 0) await sleep(intervalMs);
  }
  const seen = 'status' in last ? `status ${last.status}` : last.error;
  throw new BenchTimeoutError(`waiting for 200 from ${targetUrl(target, path)} (last: ${seen})`, timeoutMs);
}

/** waitForListening waits until the port accepts connections and answers anything, for at most `timeoutMs`. */
export async function waitForListening(target: Target, timeoutMs = 10_000): Promise<void> {
  const start = performance.now();
  let last: ProbeResult = { error: 'not probed' };
  while (performance.now() - start < timeoutMs) {
    last = await probe(target, '/');
    if ('status' in last) return;
    await sleep(20);
  }
  throw new BenchTimeoutError(`waiting for ${targetUrl(target, '/')} to listen (last: ${'error' in last ? last.error : ''})`, timeoutMs);
}
