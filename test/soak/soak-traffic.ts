// soak-traffic.ts — the soak's bounded request loop: at a fixed rate, one request at a time of each
// kind in turn (HTTP/1.1 GET, h2 GET, a WebSocket echo, an upload with a checksum, a GET through
// the Gateway, a gRPC unary call through the Gateway's GRPCRoute, a TCP echo through the
// LoadBalancer port), each recorded with its start, route, edge, outcome and latency; and the
// control API probe, whose acknowledged reservations and keys the checks look for in the store at
// the end. Every client notices at once a connection closed under it (a killed edge node, a tunnel
// ended) and records why, instead of waiting for the timeout.
import { createHash, randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { connect as h2connect } from 'node:http2';
import { connect } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import WebSocket from 'ws';
import { BASE_DOMAIN } from '../support/edge-store-harness.js';
import { GATEWAY_PORT } from './soak-stack.js';
import type { Stack } from './soak-stack.js';
import type { SoakEdge } from './soak-processes.js';

/** KINDS are the request kinds, sent in turn. */
export const KINDS = ['h1', 'h2', 'ws', 'upload', 'gateway', 'grpc', 'tcp'] as const;
export type Kind = (typeof KINDS)[number];

/** IDEMPOTENT says which kinds a client may send again: the GETs (the edge may retry them; a gRPC call is a POST). */
export const IDEMPOTENT: Record<Kind, boolean> = { h1: true, h2: true, ws: false, upload: false, gateway: true, grpc: false, tcp: false };

/** GRPC_METHOD is the unary method of echo-basic's gRPC server (GRPC_ECHO_SERVER=1), as the conformance suite's GRPCRoute backends serve it. */
export const GRPC_METHOD = '/gateway_api_conformance.echo_basic.grpcecho.GrpcEcho/Echo';

/** REQUEST_TIMEOUT_MS is when a request counts as hung (and is ended). */
export const REQUEST_TIMEOUT_MS = 10_000;

/** Sample is one request's record. */
export interface Sample {
  kind: Kind;
  /** edge node name, or `addr` for the Gateway's dedicated address (bound by whichever node got it) */
  edge: string;
  start: number;
  end: number;
  /** `ok`, `status NNN`, `wrong backend`, `checksum`, `timeout`, `closed …` (with what was seen), `grpc CODE` or an error code */
  outcome: string;
}

/** ProbeSample is one control API call of the probe. */
export interface ProbeSample {
  start: number;
  end: number;
  /** 201, the error status, or 0 for no answer */
  status: number;
  code: string;
  reservationId?: string;
  keyId?: string;
}

interface Answer {
  status: number;
  body: string;
}

function withTimeout<T>(work: (done: (value: T) => void, fail: (error: Error) => void, onTimeout: (end: () => void) => void) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let ender: (() => void) | undefined;
    const timer = setTimeout(() => {
      ender?.();
      reject(Object.assign(new Error('timeout'), { code: 'timeout' }));
    }, REQUEST_TIMEOUT_MS);
    work(
      (value) => (clearTimeout(timer), resolve(value)),
      (error) => (clearTimeout(timer), reject(error)),
      (end) => (ender = end),
    );
  });
}

/** closed is the failure of a connection or stream that ended before its answer did, saying what was seen. */
const closed = (what: string): Error => Object.assign(new Error(what), { code: `closed ${what}` });

export function http1(host: string, port: number, authority: string, method: string, path: string, body?: Buffer): Promise<Answer> {
  return withTimeout((done, fail, onTimeout) => {
    const req = request({ host, port, method, path, headers: { host: authority }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => done({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', fail);
      // the connection ended in the middle of the body (no 'end'): failed at once, not at the timeout
      res.on('close', () => fail(closed(`in the answer (status ${res.statusCode ?? 0}, ${chunks.reduce((n, c) => n + c.length, 0)} bytes)`)));
    });
    req.on('close', () => fail(closed('before the answer')));
    onTimeout(() => req.destroy());
    req.on('error', fail);
    req.end(body);
  });
}

export function http2Get(host: string, port: number, authority: string, path: string): Promise<Answer> {
  return withTimeout((done, fail, onTimeout) => {
    const session = h2connect(`http://${host}:${port}`);
    onTimeout(() => session.destroy());
    session.on('error', fail);
    const stream = session.request({ ':method': 'GET', ':path': path, ':authority': authority });
    let status = 0;
    const chunks: Buffer[] = [];
    stream.on('response', (headers) => (status = Number(headers[':status'])));
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => {
      session.close();
      done({ status, body: Buffer.concat(chunks).toString('utf8') });
    });
    stream.on('error', (e) => (session.destroy(), fail(e)));
    // a stream closed without 'end' (its session gone under it) fails at once
    stream.on('close', () => (session.destroy(), fail(closed(`h2 stream (status ${status}, rst ${stream.rstCode ?? '-'})`))));
    session.on('close', () => fail(closed('h2 session')));
  });
}

export function wsEcho(host: string, port: number, authority: string, text: string): Promise<string> {
  return withTimeout((done, fail, onTimeout) => {
    // echo-basic's WebSocket handler (golang.org/x/net/websocket) refuses a handshake without an Origin
    const ws = new WebSocket(`ws://${host}:${port}/ws`, { headers: { host: authority }, origin: `http://${authority}` });
    onTimeout(() => ws.terminate());
    ws.on('open', () => ws.send(text));
    ws.on('message', (data: Buffer) => {
      ws.close();
      done(data.toString('utf8'));
    });
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => (ws.terminate(), fail(Object.assign(new Error('refused'), { code: `status ${res.statusCode} ${body.split('\n')[0]!.slice(0, 60)}`.trim() }))));
      res.on('error', () => (ws.terminate(), fail(Object.assign(new Error('refused'), { code: `status ${res.statusCode}` }))));
    });
    ws.on('error', fail);
    // the server side gone (an edge node killed, a tunnel ended under the stream): a close with no
    // answer is a failure at once, with its code (1006: the connection ended without a close frame)
    ws.on('close', (code: number, reason: Buffer) => fail(closed(`websocket ${code}${reason.length > 0 ? ` ${reason.toString('utf8').slice(0, 40)}` : ''} before the echo`)));
  });
}

export function tcpEcho(host: string, port: number, payload: Buffer): Promise<Buffer> {
  return withTimeout((done, fail, onTimeout) => {
    const socket = connect({ host, port });
    onTimeout(() => socket.destroy());
    const chunks: Buffer[] = [];
    let got = 0;
    socket.on('connect', () => socket.write(payload));
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      got += c.length;
      if (got >= payload.length) socket.end();
    });
    socket.on('error', fail);
    // a connection closed before the whole echo came back is a failure of the connection, not a wrong checksum
    socket.on('close', () => (got === 0 || got >= payload.length ? done(Buffer.concat(chunks)) : fail(closed(`after ${got} of ${payload.length} bytes`))));
  });
}

/** protoFields reads the length-delimited and varint fields of a protobuf message (enough for echo-basic's EchoResponse). */
function protoFields(buf: Buffer): Map<number, Buffer[]> {
  const fields = new Map<number, Buffer[]>();
  let i = 0;
  const varint = (): number => {
    let value = 0;
    for (let shift = 0; i < buf.length && shift < 35; shift += 7) {
      const b = buf[i++]!;
      value += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) return value;
    }
    throw new Error('bad varint');
  };
  while (i < buf.length) {
    const tag = varint();
    const wire = tag & 7;
    let value: Buffer;
    if (wire === 0) value = Buffer.from(String(varint()));
    else if (wire === 2) {
      const n = varint();
      value = buf.subarray(i, i + n);
      i += n;
    } else if (wire === 1 || wire === 5) {
      const n = wire === 1 ? 8 : 4;
      value = buf.subarray(i, i + n);
      i += n;
    } else throw new Error(`wire type ${wire}`);
    const field = Math.floor(tag / 8);
    fields.set(field, [...(fields.get(field) ?? []), value]);
  }
  return fields;
}

/** EchoAnswer is what the soak reads of echo-basic's EchoResponse: assertions.fully_qualified_method and assertions.context. */
interface EchoAnswer {
  method: string;
  namespace: string;
  pod: string;
}

/** decodeEcho reads EchoResponse { Assertions assertions = 1 } → Assertions { string fully_qualified_method = 1; Context context = 4 } → Context { namespace = 1; pod = 4 }. */
function decodeEcho(buf: Buffer): EchoAnswer {
  const assertions = protoFields(protoFields(buf).get(1)?.[0] ?? Buffer.alloc(0));
  const context = protoFields(assertions.get(4)?.[0] ?? Buffer.alloc(0));
  return { method: assertions.get(1)?.[0]?.toString('utf8') ?? '', namespace: context.get(1)?.[0]?.toString('utf8') ?? '', pod: context.get(4)?.[0]?.toString('utf8') ?? '' };
}

/** grpcEcho makes one unary call of GRPC_METHOD over h2c (a channel of its own, closed after), with the request deadline. */
function grpcEcho(host: string, port: number, authority: string): Promise<EchoAnswer> {
  return withTimeout((done, fail, onTimeout) => {
    const client = new grpc.Client(`${host}:${port}`, grpc.credentials.createInsecure(), { 'grpc.default_authority': authority, 'grpc.enable_retries': 0, 'grpc.use_local_subchannel_pool': 1 });
    onTimeout(() => client.close());
    client.makeUnaryRequest(
      GRPC_METHOD,
      () => Buffer.alloc(0),
      (b: Buffer) => b,
      Buffer.alloc(0),
      new grpc.Metadata(),
      { deadline: Date.now() + REQUEST_TIMEOUT_MS - 100 },
      (err, value) => {
        client.close();
        if (err) return fail(Object.assign(new Error(err.message), { code: `grpc ${grpc.status[err.code]} ${err.details.slice(0, 60)}`.trim() }));
        try {
          done(decodeEcho(value ?? Buffer.alloc(0)));
        } catch (e) {
          fail(Object.assign(new Error(String(e)), { code: 'wrong backend' }));
        }
      },
    );
  });
}

const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

/** judge checks an echo answer came from the expected Deployment of the apps namespace. */
function judge(answer: Answer, podPrefix: string, namespace: string, check: (body: Record<string, unknown>) => boolean = () => true): string {
  // an edge's own answer says why in its first line (no tunnel, the tunnel failed)
  if (answer.status !== 200) return `status ${answer.status}${answer.body.startsWith('{') ? '' : ` ${answer.body.split('\n')[0]!.slice(0, 60)}`}`.trim();
  try {
    const body = JSON.parse(answer.body) as Record<string, unknown>;
    if (typeof body.pod !== 'string' || !body.pod.startsWith(podPrefix) || body.namespace !== namespace) return 'wrong backend';
    return check(body) ? 'ok' : 'checksum';
  } catch {
    return 'wrong backend';
  }
}

/** answersThrough says a GET of the Ingress's host through an edge node is answered by its Deployment. */
export async function answersThrough(stack: Stack, edge: SoakEdge): Promise<boolean> {
  const answer = await http1(edge.spec.httpHost, edge.spec.httpPort, stack.routes.ingressHost, 'GET', '/answers').catch(() => undefined);
  return answer !== undefined && judge(answer, 'web-', stack.apps) === 'ok';
}

/** EdgeHealth is the balancer of the public side: a TCP connect to each node's HTTP port every 250 ms. */
export class EdgeHealth {
  private readonly up = new Map<string, boolean>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly edges: readonly SoakEdge[]) {
    for (const e of edges) this.up.set(e.spec.name, true);
  }

  start(): void {
    this.timer = setInterval(() => {
      for (const e of this.edges) {
        const socket = connect({ host: e.spec.httpHost, port: e.spec.httpPort });
        socket.setTimeout(1000, () => socket.destroy());
        socket.on('connect', () => (this.up.set(e.spec.name, true), socket.destroy()));
        socket.on('error', () => this.up.set(e.spec.name, false));
      }
    }, 250);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /**
   * next is the node to send to, at random among those that answered the last check (any when
   * none did): at random, not in turn, so no kind of request always goes to the same node.
   */
  next(): SoakEdge {
    const live = this.edges.filter((e) => this.up.get(e.spec.name) === true);
    const from = live.length > 0 ? live : this.edges;
    return from[Math.floor(Math.random() * from.length)]!;
  }
}

/** TrafficLoop sends requests at `ratePerSecond` until stopped, and probes the control API every `probeMs`. */
export class TrafficLoop {
  readonly samples: Sample[] = [];
  readonly probes: ProbeSample[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private readonly health: EdgeHealth;
  private timer: NodeJS.Timeout | undefined;
  private probeTimer: NodeJS.Timeout | undefined;
  private count = 0;
  private probeCount = 0;
  private isProbing = false;

  constructor(
    private readonly stack: Stack,
    private readonly ratePerSecond: number,
    private readonly probeMs: number,
  ) {
    this.health = new EdgeHealth(stack.edges);
  }

  start(): void {
    this.health.start();
    this.timer = setInterval(() => this.fire(), 1000 / this.ratePerSecond);
    this.probeTimer = setInterval(() => void this.probe(), this.probeMs);
  }

  /** stop ends the loop and waits for the requests in flight (each ends by its timeout at the latest). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    clearInterval(this.probeTimer);
    this.health.stop();
    while (this.inFlight.size > 0 || this.isProbing) await Promise.all([...this.inFlight, new Promise((r) => setTimeout(r, 50))]);
  }

  /** send sends one request of `kind` and records it. */
  async send(kind: Kind, edge = this.health.next()): Promise<Sample> {
    const start = Date.now();
    const outcome = await this.attempt(kind, edge).catch((e: unknown) => String((e as { code?: string }).code ?? (e as Error).message));
    const sample = { kind, edge: kind === 'gateway' || kind === 'grpc' ? 'addr' : edge.spec.name, start, end: Date.now(), outcome };
    this.samples.push(sample);
    return sample;
  }

  private fire(): void {
    const kind = KINDS[this.count++ % KINDS.length]!;
    const p = this.send(kind).then(() => undefined);
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p));
  }

  private async attempt(kind: Kind, edge: SoakEdge): Promise<string> {
    const { routes, apps } = this.stack;
    const { httpHost: host, httpPort: port } = edge.spec;
    const n = this.count;
    switch (kind) {
      case 'h1':
        return judge(await http1(host, port, routes.ingressHost, 'GET', `/h1/${n}`), 'web-', apps);
      case 'h2':
        return judge(await http2Get(host, port, routes.ingressHost, `/h2/${n}`), 'web-', apps);
      case 'gateway':
        return judge(await http1(routes.gatewayAddress, GATEWAY_PORT, routes.gatewayHost, 'GET', `/gw/${n}`), 'gw-', apps);
      case 'grpc': {
        const answer = await grpcEcho(routes.gatewayAddress, GATEWAY_PORT, routes.grpcHost);
        return answer.pod.startsWith('grpc-') && answer.namespace === apps && answer.method === GRPC_METHOD ? 'ok' : 'wrong backend';
      }
      case 'upload': {
        const body = randomBytes(64 * 1024);
        return judge(await http1(host, port, routes.ingressHost, 'POST', `/upload/${n}`, body), 'sink-', apps, (b) => b.sha256 === sha(body) && b.bytes === body.length);
      }
      case 'ws': {
        const text = `soak ${n} ${randomBytes(8).toString('hex')}`;
        return (await wsEcho(host, port, routes.ingressHost, text)) === text ? 'ok' : 'checksum';
      }
      case 'tcp': {
        const payload = randomBytes(16 * 1024);
        const got = await tcpEcho(host, routes.tcpPort, payload);
        return got.length === 0 ? 'closed' : sha(got) === sha(payload) ? 'ok' : 'checksum';
      }
    }
  }

  /** probe reserves a hostname and mints a key for it through the control API, recording what was acknowledged. */
  private async probe(): Promise<void> {
    if (this.isProbing) return;
    this.isProbing = true;
    const start = Date.now();
    const labels = { 'tuna.dev/soak': this.stack.id };
    const sample: ProbeSample = { start, end: start, status: 0, code: '' };
    try {
      const reserved = await this.stack.control.reserve({ kind: 'domain', hostname: `probe-${this.probeCount++}-${this.stack.id}.${BASE_DOMAIN}`, labels });
      sample.reservationId = reserved.reservation.id;
      const minted = await this.stack.control.mintTunnelKey({ reservationId: reserved.reservation.id, protocol: 'http', labels });
      sample.keyId = minted.tunnelKey.id;
      sample.status = 201;
    } catch (error) {
      sample.status = (error as { status?: number }).status ?? 0;
      sample.code = (error as { code?: string }).code ?? String(error);
    } finally {
      sample.end = Date.now();
      this.probes.push(sample);
      this.isProbing = false;
    }
  }
}
