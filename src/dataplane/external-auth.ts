import { Readable } from 'node:stream';
import type { Writable } from 'node:stream';
import { chooseEndpoint } from './backend-choice.js';
import type { Downstream } from './exchange.js';
import type { HeaderMap } from './headers.js';
import { stripHopByHop } from './headers.js';
import type { ProxyDeps } from './http-proxy.js';
import type { ExternalAuthFilter, IncomingFacts, LocalAnswer } from './request-plan.js';
import type { UpstreamCall, UpstreamReceiver, UpstreamResponse } from './upstream.js';

/**
 * External authorization (docs/dataplane.md "External authorization"): before a request is
 * forwarded, the data plane asks an authorization Service about it, and forwards it only if the
 * answer allows it. Gateway API's HTTPRoute `ExternalAuth` filter in HTTP mode (GEP-1494) and
 * ingress-nginx's `auth-url` both come here, differing in how the answer is read (`semantics`).
 * It fails closed: an authorization Service that cannot be reached, errs or is too slow gives 503,
 * never a request let through.
 */

/** AuthAllowed is an allowing answer: headers for the request to the backend, and the body read to send it (when it was). */
export interface AuthAllowed {
  kind: 'allow';
  headers: HeaderMap;
  /** the request body, when it was read to be sent along: the backend gets these bytes */
  body?: Buffer;
}

/** AuthVerdict is what authorize decided: allowed, or the client's answer. */
export type AuthVerdict = AuthAllowed | LocalAnswer;

/** MAX_ANSWER_BODY bounds the body of an authorization answer the data plane reads (it is relayed to a refused client). */
const MAX_ANSWER_BODY = 64 << 10;

/**
 * Headers of an allowing answer never copied upstream, whatever the filter lists: they describe the
 * answer itself (its framing and representation), not the request being allowed.
 */
const ANSWER_ONLY = new Set(['host', 'content-length', 'content-type', 'content-encoding', 'transfer-encoding', 'date', 'server', 'set-cookie']);

function local(status: number, body: string, headers: HeaderMap = {}): LocalAnswer {
  return { kind: 'local', status, body, headers };
}

/**
 * authorize asks the filter's Service about one request and calls `done` once with the verdict.
 * `ds` is the client's exchange when its body may be read and sent along (HTTP requests; an
 * upgrade has none).
 */
export function authorize(deps: ProxyDeps, f: ExternalAuthFilter, req: IncomingFacts, ds: Downstream | undefined, done: (verdict: AuthVerdict) => void): void {
  if (f.semantics === 'gateway' && f.forwardBodyBytes > 0 && ds?.hasBody === true) {
    const declared = Number(firstValue(req.headers['content-length']) ?? NaN);
    if (declared > f.forwardBodyBytes) return done(local(413, `request body larger than the ${f.forwardBodyBytes} bytes external authorization reads\n`));
    return readBounded(ds, f.forwardBodyBytes, (body) => {
      if (body === undefined) return done(local(413, `request body larger than the ${f.forwardBodyBytes} bytes external authorization reads\n`));
      ask(deps, f, req, body, done);
    });
  }
  ask(deps, f, req, undefined, done);
}

/**
 * authorizeAll asks each authorization in turn (a route policy's, then the rule's filter): the
 * first refusal is the verdict; each allowing answer's headers add to the last's, and a body read
 * by one is what the next is told and the backend gets.
 */
export function authorizeAll(deps: ProxyDeps, checks: readonly ExternalAuthFilter[], req: IncomingFacts, ds: Downstream | undefined, done: (verdict: AuthVerdict) => void): void {
  const headers: HeaderMap = {};
  let body: Buffer | undefined;
  const next = (i: number, down: Downstream | undefined): void => {
    if (i === checks.length) return done({ kind: 'allow', headers, ...(body !== undefined ? { body } : {}) });
    authorize(deps, checks[i]!, req, down, (verdict) => {
      if (verdict.kind === 'local') return done(verdict);
      Object.assign(headers, verdict.headers);
      if (verdict.body !== undefined) body = verdict.body;
      next(i + 1, down !== undefined && verdict.body !== undefined ? withBody(down, verdict.body) : down);
    });
  };
  next(0, ds);
}

/** ask sends the authorization request (with `body` when it was read) and reads the answer. */
function ask(deps: ProxyDeps, f: ExternalAuthFilter, req: IncomingFacts, body: Buffer | undefined, done: (verdict: AuthVerdict) => void): void {
  const choice = chooseEndpoint(deps, [f.backend]);
  if (choice.kind === 'local') return done(local(503, `external authorization unavailable: ${choice.body}`));
  const nginx = f.semantics === 'nginx';
  const headers = authRequestHeaders(f, req, nginx ? 0 : (body?.length ?? 0));
  const request = {
    method: nginx ? 'GET' : req.method,
    path: nginx ? f.pathPrefix || '/' : `${f.pathPrefix}${req.path}${req.search}`,
    authority: nginx ? `${f.backend.service}.${f.backend.namespace}` : req.authority,
    headers,
    body: !nginx && body !== undefined && body.length > 0 ? Readable.from([body]) : undefined,
  };
  const receiver = new AuthAnswer(f, req, body, done);
  receiver.call = deps.clientFor(f.backend).send(choice.endpoint, request, receiver);
  receiver.startTimer(f.timeoutMs);
}

/** authRequestHeaders are what the authorization Service is told: Host (as the authority), Authorization, Content-Length, and the filter's chosen headers. */
function authRequestHeaders(f: ExternalAuthFilter, req: IncomingFacts, bodyLength: number): HeaderMap {
  const out: HeaderMap = {};
  if (f.requestHeaders === 'all') Object.assign(out, stripHopByHop(req.headers));
  else
    for (const name of f.requestHeaders) {
      const v = req.headers[name];
      if (v !== undefined) out[name] = v;
    }
  const authorization = req.headers.authorization;
  if (authorization !== undefined) out.authorization = authorization;
  delete out['transfer-encoding'];
  delete out.expect;
  out['content-length'] = String(bodyLength);
  if (f.semantics === 'nginx') {
    // what ingress-nginx tells its auth-url (its auth_request location)
    const url = `${req.scheme}://${req.authority}${req.path}${req.search}`;
    out['x-original-url'] = url;
    out['x-original-method'] = req.method;
    out['x-auth-request-redirect'] = `${req.path}${req.search}`;
    out['x-forwarded-host'] = req.authority;
    out['x-forwarded-proto'] = req.scheme;
    out['x-forwarded-for'] = req.clientAddress;
    out['x-real-ip'] = req.clientAddress;
  }
  return out;
}

/**
 * AuthAnswer hears one authorization request's answer (the upstream clients' receiver), reads its
 * body up to MAX_ANSWER_BODY and turns it into the verdict, at most once.
 */
class AuthAnswer implements UpstreamReceiver {
  call: UpstreamCall | undefined;
  #timer: NodeJS.Timeout | undefined;
  #isDone = false;

  constructor(
    private readonly f: ExternalAuthFilter,
    private readonly req: IncomingFacts,
    private readonly body: Buffer | undefined,
    private readonly done: (verdict: AuthVerdict) => void,
  ) {}

  startTimer(ms: number): void {
    if (this.#isDone) return;
    this.#timer = setTimeout(() => {
      this.call?.cancel(new Error('external authorization timed out'));
      this.#settle(local(503, `external authorization timed out after ${ms} ms\n`));
    }, ms);
  }

  onUpstreamError(): void {
    this.#settle(local(503, 'external authorization failed: the authorization service could not be reached\n'));
  }

  onUpstreamResponse(res: UpstreamResponse): void {
    const chunks: Buffer[] = [];
    let size = 0;
    res.body.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_ANSWER_BODY) {
        res.body.destroy();
        this.#settle(local(502, 'external authorization failed: its answer is too large\n'));
      } else chunks.push(c);
    });
    res.body.once('error', () => this.#settle(local(503, 'external authorization failed: its answer was cut\n')));
    res.body.once('end', () => this.#settle(this.#verdict(res, Buffer.concat(chunks))));
  }

  #verdict(res: UpstreamResponse, answer: Buffer): AuthVerdict {
    const f = this.f;
    const allows = f.semantics === 'gateway' ? res.status === 200 : res.status >= 200 && res.status < 300;
    if (allows) return { kind: 'allow', headers: allowedHeaders(f, res), ...(this.body !== undefined ? { body: this.body } : {}) };
    if (f.semantics === 'nginx') {
      const location = res.status === 401 && f.signinUrl !== undefined ? signinLocation(f.signinUrl, this.req) : undefined;
      if (location !== undefined) return local(302, '', { location });
      if (res.status !== 401 && res.status !== 403) return local(500, 'external authorization failed\n');
    }
    const headers = stripHopByHop(res.headers);
    delete headers['content-length'];
    return local(res.status, answer.toString('utf8'), headers);
  }

  #settle(verdict: AuthVerdict): void {
    if (this.#isDone) return;
    this.#isDone = true;
    clearTimeout(this.#timer);
    this.done(verdict);
  }
}

/** allowedHeaders copies the answer's headers the filter lets through into the request to the backend. */
function allowedHeaders(f: ExternalAuthFilter, res: UpstreamResponse): HeaderMap {
  const out: HeaderMap = {};
  const all = stripHopByHop(res.headers);
  const names = f.responseHeaders === 'all' ? Object.keys(all) : f.responseHeaders;
  for (const name of names) {
    const v = all[name];
    if (v !== undefined && !ANSWER_ONLY.has(name)) out[name] = v;
  }
  return out;
}

/**
 * signinLocation is ingress-nginx's auth-signin redirect: the sign-in URL with the variables
 * ingress-nginx users write in it (`$host`, `$request_uri`, `$escaped_request_uri`) filled in, and
 * `rd` set to the URL the browser asked for unless the URL sets it. Undefined when the result is not a URL.
 */
function signinLocation(signin: string, req: IncomingFacts): string | undefined {
  const uri = `${req.path}${req.search}`;
  const filled = signin.replace(/\$(escaped_request_uri|request_uri|host)\b/g, (_m, v: string) => (v === 'host' ? req.authority : v === 'request_uri' ? uri : encodeURIComponent(uri)));
  let url: URL;
  try {
    url = new URL(filled);
  } catch {
    return undefined;
  }
  if (!url.searchParams.has('rd')) url.searchParams.set('rd', `${req.scheme}://${req.authority}${uri}`);
  return url.href;
}

/** readBounded reads a body of at most `max` bytes (undefined when it is longer); a client that leaves ends it with undefined too. */
function readBounded(ds: Downstream, max: number, done: (body: Buffer | undefined) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let isDone = false;
  const finish = (body: Buffer | undefined): void => {
    if (isDone) return;
    isDone = true;
    ds.body.off('data', onData);
    done(body);
  };
  const onData = (c: Buffer): void => {
    size += c.length;
    if (size > max) {
      ds.body.pause();
      return finish(undefined);
    }
    chunks.push(c);
  };
  ds.body.on('data', onData);
  ds.body.once('end', () => finish(Buffer.concat(chunks)));
  ds.body.once('error', () => finish(undefined));
  ds.onClose(() => finish(undefined));
}

function firstValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/**
 * withBody is the client's exchange with its body replaced by the bytes already read (the
 * authorization read them; the backend gets them all the same).
 */
export function withBody(ds: Downstream, body: Buffer): Downstream {
  return new ReplayedBody(ds, body);
}

class ReplayedBody implements Downstream {
  readonly body: Readable;
  readonly hasBody: boolean;

  constructor(
    private readonly ds: Downstream,
    bytes: Buffer,
  ) {
    this.body = Readable.from(bytes.length > 0 ? [bytes] : []);
    this.hasBody = bytes.length > 0;
  }

  get method(): string {
    return this.ds.method;
  }
  get authority(): string {
    return this.ds.authority;
  }
  get target(): string {
    return this.ds.target;
  }
  get headers(): Downstream['headers'] {
    return this.ds.headers;
  }
  get out(): Writable {
    return this.ds.out;
  }
  get headersSent(): boolean {
    return this.ds.headersSent;
  }
  get isClosed(): boolean {
    return this.ds.isClosed;
  }
  get isAborted(): boolean {
    return this.ds.isAborted;
  }
  respond(...args: Parameters<Downstream['respond']>): void {
    this.ds.respond(...args);
  }
  onClose(callback: () => void): void {
    this.ds.onClose(callback);
  }
  destroy(err?: Error): void {
    this.ds.destroy(err);
  }
}
