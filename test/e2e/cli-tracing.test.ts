import { expect } from 'chai';
import { once } from 'node:events';
import { createServer, request } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CliRuns, newKey } from '../support/backend-cli.js';
import type { CliRun } from '../support/backend-cli.js';
import { startHttpBackend } from '../support/backend-servers.js';
import type { TestBackend } from '../support/backend-servers.js';

/** OtlpSpan is the part of an OTLP/JSON span the tests read (ids are hex in OTLP/JSON). */
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: { stringValue?: string; intValue?: string | number; boolValue?: boolean } }[];
  status?: { code?: number };
}

/** Receiver is a local OTLP/HTTP traces receiver: it keeps every span posted to /v1/traces (JSON). */
class Receiver {
  readonly spans: { service: string; span: OtlpSpan }[] = [];
  readonly headers: IncomingHttpHeaders[] = [];
  private constructor(private readonly server: Server) {}

  static async start(): Promise<Receiver> {
    const server = createServer();
    const r = new Receiver(server);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.url !== '/v1/traces' || !String(req.headers['content-type']).startsWith('application/json')) return void res.writeHead(415).end();
        r.headers.push(req.headers);
        const body = JSON.parse(Buffer.concat(chunks).toString()) as { resourceSpans: { resource: { attributes: OtlpSpan['attributes'] }; scopeSpans: { spans: OtlpSpan[] }[] }[] };
        for (const rs of body.resourceSpans) {
          const service = rs.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue ?? '';
          for (const ss of rs.scopeSpans) for (const span of ss.spans) r.spans.push({ service, span });
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return r;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1/traces`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

function attr(span: OtlpSpan, key: string): string | number | boolean | undefined {
  const v = span.attributes.find((a) => a.key === key)?.value;
  if (v === undefined) return undefined;
  return v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : v.boolValue);
}

/** get makes one request through the edge's public HTTP port. */
function get(port: number, host: string, path: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false, headers: { host, ...headers } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.once('error', reject);
    req.end();
  });
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const CLIENT_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN = '00f067aa0ba902b7';

/** Traces through a real edge and `tuna http`: the W3C trace context reaches the backend, and with an OTLP endpoint a span per request reaches it. */
describe('tuna http --trace-endpoint', function () {
  this.timeout(30_000);
  const runs = new CliRuns();
  const cli = (argv: string[], env: NodeJS.ProcessEnv = {}): CliRun => runs.start(argv, env);
  let backends: TestBackend[] = [];
  let receiver: Receiver | undefined;
  /** what the backend received, per request */
  let seen: IncomingHttpHeaders[] = [];

  afterEach(async () => {
    await runs.stopAll();
    await Promise.all(backends.map((b) => b.close()));
    await receiver?.close();
    backends = [];
    receiver = undefined;
    seen = [];
  });

  async function publish(forwarding: 'spliced' | 'per-request', flags: string[], env: NodeJS.ProcessEnv = {}): Promise<{ http: number; agent: CliRun }> {
    const backend = await startHttpBackend('traced', (req, res) => {
      seen.push(req.headers);
      req.resume();
      res.writeHead(req.url === '/fail' ? 503 : 200).end('ok');
    });
    backends.push(backend);
    const { key, sha256 } = newKey();
    const edge = cli(['edge', '--tunnel', '127.0.0.1:0', '--http', '127.0.0.1:0', '--bind', `trace.test=${sha256}`, '--workers', '1', '--http1-forwarding', forwarding]);
    const line = await edge.waitForOut('tunnel listener on port');
    const [, tunnel, http] = /port (\d+), public HTTP on port (\d+)/.exec(line)!;
    const agent = cli(['http', String(backend.port), '--host', 'trace.test', '--edge', `tcp://127.0.0.1:${tunnel}`, '--key', key, ...flags], env);
    await agent.waitForOut('Forwarding trace.test');
    return { http: Number(http), agent };
  }

  for (const forwarding of ['spliced', 'per-request'] as const) {
    it(`continues the client's trace: the backend's parent is the agent's span, which the receiver gets (${forwarding} HTTP/1.1)`, async () => {
      receiver = await Receiver.start();
      const { http, agent } = await publish(forwarding, ['--trace-endpoint', receiver.url]);
      const status = await get(http, 'trace.test', '/items?page=2&access_token=sekrit', { traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01`, tracestate: 'vendor=abc' });
      expect(status).to.equal(200);
      const [, trace, parent, flags] = TRACEPARENT.exec(String(seen[0]?.traceparent))!;
      expect(trace).to.equal(CLIENT_TRACE);
      expect(parent).not.to.equal(CLIENT_SPAN);
      expect(flags).to.equal('01');
      expect(seen[0]?.tracestate).to.equal('vendor=abc');
      agent.stop();
      expect(await agent.exit).to.equal(0); // the stop flushes the batch
      expect(receiver.spans).to.have.length(1);
      const { service, span } = receiver.spans[0]!;
      expect(service).to.equal('tuna-http');
      expect(span).to.deep.include({ traceId: CLIENT_TRACE, spanId: parent, parentSpanId: CLIENT_SPAN, name: 'GET', kind: 2 });
      expect(attr(span, 'http.response.status_code')).to.equal(200);
      expect(attr(span, 'server.address')).to.equal('trace.test');
      expect(attr(span, 'url.path')).to.equal('/items');
      expect(attr(span, 'url.query')).to.equal('page=2&access_token=[redacted]');
      expect(attr(span, 'tuna.binding')).to.equal('binding/host/trace.test');
      expect(String(attr(span, 'tuna.route'))).to.contain('rule/0');
      expect(JSON.stringify(receiver.spans)).not.to.contain('sekrit');
    });
  }

  it('starts a trace for a request without one, marks a 5xx as an error, and takes the endpoint and headers from the OTEL_ variables', async () => {
    receiver = await Receiver.start();
    const base = receiver.url.replace(/\/v1\/traces$/, '');
    const { http, agent } = await publish('spliced', [], { OTEL_EXPORTER_OTLP_ENDPOINT: base, OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=collector%20key', OTEL_SERVICE_NAME: 'shop' });
    expect(await get(http, 'trace.test', '/fail')).to.equal(503);
    expect(await get(http, 'trace.test', '/again', { traceparent: 'not a traceparent', tracestate: 'vendor=forged' })).to.equal(200);
    agent.stop();
    expect(await agent.exit).to.equal(0);
    const backendTraces = seen.map((h) => TRACEPARENT.exec(String(h.traceparent)));
    expect(backendTraces.every((m) => m !== null)).to.equal(true);
    expect(seen[1]?.tracestate).to.equal(undefined); // a tracestate goes with the invalid traceparent it came with
    expect(receiver.spans.map((s) => s.service)).to.deep.equal(['shop', 'shop']);
    const byTrace = new Map(receiver.spans.map((s) => [s.span.traceId, s.span]));
    for (const m of backendTraces) {
      const span = byTrace.get(m![1]!)!;
      expect(span.spanId).to.equal(m![2]);
      expect(span.parentSpanId ?? '').to.equal('');
    }
    expect(byTrace.get(backendTraces[0]![1]!)!.status?.code).to.equal(2); // ERROR
    expect(receiver.headers[0]?.['x-api-key']).to.equal('collector key');
    expect(agent.out.join('\n') + agent.err.join('\n')).not.to.contain('collector key');
  });

  it("passes the client's traceparent through the edge and the agent untouched when tracing is off", async () => {
    const { http } = await publish('per-request', []);
    expect(await get(http, 'trace.test', '/', { traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01`, tracestate: 'vendor=abc' })).to.equal(200);
    expect(seen[0]?.traceparent).to.equal(`00-${CLIENT_TRACE}-${CLIENT_SPAN}-01`);
    expect(seen[0]?.tracestate).to.equal('vendor=abc');
  });

  it('keeps serving when the receiver is down, and says so once', async () => {
    receiver = await Receiver.start();
    const url = receiver.url;
    await receiver.close();
    receiver = undefined;
    const { http, agent } = await publish('spliced', ['--trace-endpoint', url]);
    for (let i = 0; i < 3; i++) expect(await get(http, 'trace.test', `/${i}`)).to.equal(200);
    const warnings = (): string[] => agent.err.filter((l) => l.includes('spans could not be sent'));
    // the batch goes out within a second, and its send gives up within the exporter's 5 s
    for (let i = 0; i < 100 && warnings().length === 0; i++) await new Promise((r) => setTimeout(r, 200));
    expect(await get(http, 'trace.test', '/after')).to.equal(200);
    agent.stop();
    expect(await agent.exit).to.equal(0);
    expect(seen).to.have.length(4);
    expect(warnings()).to.have.length(1);
  });

  it('refuses a bad endpoint or sample share with a usage error (exit 2)', async () => {
    for (const [flags, message] of [
      [['--trace-endpoint', 'ftp://127.0.0.1/v1/traces'], /must be an http:\/\/ or https:\/\/ URL/],
      [['--trace-endpoint', 'not a url'], /is not a URL/],
      [['--trace-endpoint', 'http://user:pw@127.0.0.1:4318/v1/traces'], /must not hold credentials/],
      [['--trace-endpoint', 'http://127.0.0.1:4318/v1/traces', '--trace-sample', '1.5'], /--trace-sample "1.5" must be a share/],
      [['--trace-sample', '0.5'], /needs --trace-endpoint/],
    ] as const) {
      const run = cli(['http', '1', '--no-check', '--host', 'x.test', '--edge', 'tcp://127.0.0.1:1', '--key', 'k', ...flags]);
      expect(await run.exit).to.equal(2);
      expect(run.err.join('\n')).to.match(message);
    }
  });
});
