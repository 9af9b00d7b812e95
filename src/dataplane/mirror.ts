import { PassThrough, Writable } from 'node:stream';
import type { Readable } from 'node:stream';
import type { Random } from './balancer.js';
import type { EndpointPicker, EndpointResolver } from './endpoints.js';
import type { MirrorFilter, ForwardPlan } from './request-plan.js';
import type { UpstreamClient } from './upstream.js';
import type { BackendProtocol } from '../model/index.js';

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
    private readonly clientFor: (protocol: BackendProtocol) => UpstreamClient,
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
    const signal = AbortSignal.timeout(this.options.timeoutMs);
    const sink = body ? this.tee(body) : undefined;
    const protocol = backend.protocol === 'h2c' || backend.protocol === 'h2' ? backend.protocol : 'http';
    const request = { method: plan.method, path: plan.target, authority: plan.authority, headers: { ...plan.headers }, body: sink };
    this.clientFor(protocol)
      .send(endpoint, request, signal)
      .then((res) => {
        res.body.resume();
        return new Promise<void>((resolve) => res.body.once('close', () => resolve()));
      })
      .catch(() => undefined)
      .finally(() => this.inFlight--);
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
