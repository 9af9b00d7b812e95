import { PassThrough, Writable } from 'node:stream';
import type { Readable } from 'node:stream';
import type { Random } from './balancer.js';
import type { EndpointPicker, EndpointResolver } from './endpoints.js';
import type { MirrorFilter, ForwardPlan } from './request-plan.js';
import type { UpstreamCall, UpstreamClient, UpstreamReceiver, UpstreamResponse } from './upstream.js';
import type { ServiceBackend } from '../model/index.js';

/** MirrorOptions bound what mirroring may cost. */
export interface MirrorOptions {
  /** mirrored requests in flight at most; beyond it, requests are not mirrored */
  maxInFlight: number;
  /** a mirror whose unsent body exceeds this is dropped instead of slowing the real request */
  maxBufferedBytes: number;
  timeoutMs: number;
}

/**
 * MirrorSender sends copies of requests to a mirror backend, fire-and-forget (Gateway API
 * HTTPRequestMirrorFilter: responses are ignored). It is bounded in requests in flight, in
 * buffered bytes and in time, and a slow or dead mirror never slows or fails the real request.
 */
export class MirrorSender {
  private inFlight = 0;
  private readonly options: MirrorOptions;

  constructor(
    private readonly endpoints: EndpointResolver,
    private readonly picker: EndpointPicker,
    private readonly clientFor: (backend: ServiceBackend) => UpstreamClient,
    private readonly random: Random,
    options: Partial<MirrorOptions> = {},
  ) {
    this.options = { maxInFlight: 64, maxBufferedBytes: 1 << 20, timeoutMs: 10_000, ...options };
  }

  /** send mirrors one request; `body` is the client's body stream (teed, never paused by the mirror). */
  send(filter: MirrorFilter, plan: ForwardPlan, body: Readable | undefined): void {
    if (this.inFlight >= this.options.maxInFlight || this.random() * 100 >= filter.percent) return;
    const backend = filter.backend;
    const endpoint = this.picker.pick(`mirror/${backend.namespace}/${backend.service}`, this.endpoints.resolve(backend));
    if (!endpoint) return;
    this.inFlight++;
    const sink = body ? this.tee(body) : undefined;
    const request = { method: plan.method, path: plan.target, authority: plan.authority, headers: { ...plan.headers }, body: sink };
    const mirrored = new MirroredRequest(() => this.inFlight--);
    try {
      mirrored.start(this.clientFor(backend).send(endpoint, request, mirrored), this.options.timeoutMs);
    } catch {
      mirrored.finish();
    }
  }

  /** inFlightCount is the number of mirrored requests not yet finished. */
  inFlightCount(): number {
    return this.inFlight;
  }

  private tee(body: Readable): Readable {
    const out = new PassThrough();
    const limit = this.options.maxBufferedBytes;
    const sink = new Writable({
      write(chunk: Buffer, _enc, callback) {
        if (!out.destroyed) {
          if (out.writableLength + out.readableLength > limit) out.destroy(new Error('mirror too slow'));
          else out.write(chunk);
        }
        callback();
      },
      final(callback) {
        if (!out.destroyed) out.end();
        callback();
      },
    });
    body.pipe(sink);
    body.once('close', () => {
      if (!body.readableEnded) out.destroy();
    });
    return out;
  }
}

/**
 * MirroredRequest follows one mirrored request: its response is read and dropped, and the mirror
 * timeout cancels it, answer or not, when it has not finished by then.
 */
class MirroredRequest implements UpstreamReceiver {
  private timer: NodeJS.Timeout | undefined = undefined;
  private isFinished = false;

  constructor(private readonly onFinish: () => void) {}

  start(call: UpstreamCall, timeoutMs: number): void {
    if (this.isFinished) return;
    // unref'd: a mirror never keeps the process alive
    this.timer = setTimeout(() => call.cancel(mirrorTimeout), timeoutMs).unref();
  }

  onUpstreamResponse(res: UpstreamResponse): void {
    res.body.resume();
    if (res.body.destroyed) return this.finish();
    res.body.once('close', () => this.finish());
  }

  onUpstreamError(): void {
    this.finish();
  }

  finish(): void {
    if (this.isFinished) return;
    this.isFinished = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.onFinish();
  }
}

// One instance: the reason is never shown.
const mirrorTimeout = new Error('mirror timeout');
