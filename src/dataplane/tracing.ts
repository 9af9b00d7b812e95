import type { Span, TextMapPropagator, Tracer } from '@opentelemetry/api';
import type { SpanExporter } from '@opentelemetry/sdk-trace';
import type { TunnelStreamContext } from '../wire/index.js';
import { redactTarget } from '../access-log/index.js';
import type { Downstream } from './exchange.js';
import type { HeaderMap } from './headers.js';
import type { ExchangeObserver } from './observer.js';

/**
 * Traces (docs/dataplane.md "Traces"): with an OTLP endpoint configured, the data plane makes one
 * server span per HTTP exchange, a child of the request's W3C `traceparent` (or the root of a new
 * trace), and sends the backend a `traceparent` naming that span, so the backend's own spans hang
 * under it. Spans go to the endpoint over OTLP/HTTP through the OpenTelemetry SDK, in batches.
 *
 * Off by default, and then free: no observer is built and none of the SDK's modules is loaded (the
 * `import()`s below run only in startTracing); `traceparent` and `tracestate` then pass to the
 * backend untouched, as every other end-to-end header does (the edge forwards them too).
 */

/** TracingOptions configure startTracing. */
export interface TracingOptions {
  /** the OTLP/HTTP traces URL (`http(s)://collector:4318/v1/traces`) */
  readonly endpoint: string;
  /** `service.name` of the spans (`tuna-http`, `tuna-operator` …) */
  readonly serviceName: string;
  /** the share of new traces sampled, in [0, 1]; a request that arrives with a traceparent keeps its caller's decision */
  readonly sample: number;
  /** extra headers for the OTLP requests (a collector's API key); never logged */
  readonly headers?: Readonly<Record<string, string>>;
  /** the exporter, when not OTLP/HTTP to `endpoint` (tests and the bench) */
  readonly exporter?: SpanExporter;
  /** how long spans wait for their batch to be sent, ms (default 1000) */
  readonly batchDelayMs?: number;
  /** how long close waits for the last batch, ms (default 2000: an unreachable collector, which the exporter retries, must not hold a stopping agent) */
  readonly closeWaitMs?: number;
  /** told of each batch the exporter failed to send (the spans of that batch are lost; serving goes on) */
  readonly onExportError?: (err: Error) => void;
}

/** TracingHandle is a started tracer: the data plane's observer, and its shutdown (flushes what is batched). */
export interface TracingHandle {
  readonly observer: ExchangeObserver;
  /** flush sends every span ended so far (it never rejects: a failed batch goes to onExportError) */
  flush(): Promise<void>;
  /** close flushes and stops the exporter (it never rejects either) */
  close(): Promise<void>;
}

/** EXPORT_TIMEOUT_MS bounds one batch's send, the exporter's retries included: a collector that is down is reported within it. */
const EXPORT_TIMEOUT_MS = 5000;

/** startTracing loads the OpenTelemetry SDK and returns the tracing observer. */
export async function startTracing(options: TracingOptions): Promise<TracingHandle> {
  if (!(options.sample >= 0 && options.sample <= 1)) throw new RangeError(`trace sample ${options.sample} is not in [0, 1]`);
  const [api, sdk, core, resources] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/sdk-trace'),
    import('@opentelemetry/core'),
    import('@opentelemetry/resources'),
  ]);
  const inner = options.exporter ?? new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter({ url: options.endpoint, headers: { ...options.headers }, timeoutMillis: EXPORT_TIMEOUT_MS });
  const exporter = reportingFailures(inner, core.ExportResultCode.SUCCESS, options.onExportError);
  const provider = new sdk.TracerProvider({
    resource: resources.resourceFromAttributes({ 'service.name': options.serviceName }),
    sampler: new sdk.ParentBasedSampler({ root: new sdk.TraceIdRatioBasedSampler(options.sample) }),
    spanProcessors: [new sdk.BatchSpanProcessor({ exporter, scheduledDelayMillis: options.batchDelayMs ?? 1000 })],
  });
  const tools: TraceTools = {
    tracer: provider.getTracer('tuna'),
    propagator: new core.W3CTraceContextPropagator(),
    root: api.ROOT_CONTEXT,
    setSpan: (ctx, span) => api.trace.setSpan(ctx, span),
    serverKind: api.SpanKind.SERVER,
    errorCode: api.SpanStatusCode.ERROR,
  };
  return {
    observer: new TraceObserver(tools),
    // a batch that could not be sent was reported already (onExportError); stopping must not fail for it
    flush: () => provider.forceFlush().catch(() => undefined),
    close: () => atMost(provider.shutdown().catch(() => undefined), options.closeWaitMs ?? 2000),
  };
}

/** atMost settles when `p` does or after `ms`, whichever comes first. */
function atMost(p: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/** reportingFailures wraps an exporter so that a batch it could not send is reported (the SDK itself only tells its diag logger, off by default). */
function reportingFailures(exporter: SpanExporter, success: number, onError: ((err: Error) => void) | undefined): SpanExporter {
  if (onError === undefined) return exporter;
  return {
    export: (spans, done) =>
      exporter.export(spans, (result) => {
        if (result.code !== success) onError(result.error ?? new Error('the trace exporter failed'));
        done(result);
      }),
    shutdown: () => exporter.shutdown(),
    ...(exporter.forceFlush ? { forceFlush: () => exporter.forceFlush!() } : {}),
  };
}

/** TraceTools are the parts of the OpenTelemetry API the observer uses (loaded lazily, so passed in). */
interface TraceTools {
  readonly tracer: Tracer;
  readonly propagator: TextMapPropagator;
  readonly root: Parameters<TextMapPropagator['extract']>[0];
  setSpan(ctx: TraceTools['root'], span: Span): TraceTools['root'];
  readonly serverKind: number;
  readonly errorCode: number;
}

/** headerGetter reads a propagation field from request headers (the first of repeated values, as W3C asks of a duplicated traceparent: it is then invalid anyway). */
const headerGetter = {
  keys: (carrier: Record<string, unknown>): string[] => Object.keys(carrier),
  get: (carrier: Record<string, unknown>, key: string): string | string[] | undefined => carrier[key] as string | string[] | undefined,
};

/** headerSetter writes a propagation field into the request headers the backend will get. */
const headerSetter = {
  set: (carrier: Record<string, unknown>, key: string, value: string): void => void (carrier[key] = value),
};

/** spans keeps an exchange's span until it ends, for `routed`. */
const spans = new WeakMap<Downstream, Span>();

/**
 * TraceObserver is the observer of a started tracer. Unlike the other observers it changes one
 * thing the backend receives: the request's `traceparent` (and `tracestate`) now name this span,
 * the rule of a tracing intermediary (W3C Trace Context §3.2, §3.3).
 */
export class TraceObserver implements ExchangeObserver {
  readonly #t: TraceTools;

  constructor(tools: TraceTools) {
    this.#t = tools;
  }

  observe(ds: Downstream, context: TunnelStreamContext): void {
    const t = this.#t;
    const headers = ds.headers as Record<string, unknown>;
    const parent = headers.traceparent === undefined ? t.root : t.propagator.extract(t.root, headers, headerGetter);
    const span = t.tracer.startSpan(ds.method, { kind: t.serverKind }, parent);
    // the backend's traceparent names this span; a malformed one from the client is replaced, and
    // with it any tracestate (W3C §3.3.1: tracestate is discarded with an invalid traceparent)
    delete headers.traceparent;
    delete headers.tracestate;
    t.propagator.inject(t.setSpan(t.root, span), headers, headerSetter);
    // a span sampled out only propagates: nothing of it is recorded or sent
    if (!span.isRecording()) return;
    const q = ds.target.indexOf('?');
    span.setAttributes({
      'http.request.method': ds.method,
      'url.path': q < 0 ? ds.target : ds.target.slice(0, q),
      'server.address': ds.authority,
      'client.address': context.clientAddress,
      'tuna.binding': context.bindingId,
      'tuna.request_id': context.requestId,
    });
    if (q >= 0) span.setAttribute('url.query', redactTarget(ds.target).slice(q + 1));
    spans.set(ds, span);
    const respond = ds.respond;
    ds.respond = (code: number, out: HeaderMap, options?: Parameters<Downstream['respond']>[2]) => {
      span.setAttribute('http.response.status_code', code);
      if (code >= 500) span.setStatus({ code: t.errorCode });
      respond.call(ds, code, out, options);
    };
    ds.onClose(() => {
      if (ds.isAborted) span.setAttribute('tuna.aborted', true);
      span.end();
    });
  }

  routed(ds: Downstream, routeId: string): void {
    spans.get(ds)?.setAttribute('tuna.route', routeId);
  }
}
