import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Socket } from 'node:net';
import type { ExchangeObserver } from '../dataplane/index.js';
import { CodedError } from '../model/index.js';
import type { TunnelStreamHandler } from '../wire/index.js';
import { handleApiRequest } from './api.js';
import { Recorder } from './recorder.js';
import { ReplayError, replayExchange } from './replay.js';
import type { ReplayResult } from './replay.js';
import { RequestLog } from './request-log.js';
import type { ExchangeRecord } from './request-log.js';

/** InspectorOptions configure the request inspector. */
export interface InspectorOptions {
  /** the address to listen on (loopback: the page shows secrets to whoever reaches it, when asked to) */
  host: string;
  /** the port; 0 picks a free one */
  port: number;
  /** bytes kept of each request and response body */
  bodyLimit: number;
  /** exchanges kept, oldest dropped first */
  maxRequests: number;
  /** show Authorization, Cookie and Set-Cookie values instead of `[redacted]` */
  showSecrets: boolean;
  /** how long a replay waits for the response headers (default 30 s) */
  replayTimeoutMs?: number;
}

/** InspectorListenError: the inspector's address cannot be bound (in use, not local). */
export class InspectorListenError extends CodedError {
  constructor(
    readonly address: string,
    readonly reason: string,
    cause: unknown,
  ) {
    super('TUNA_INSPECTOR_LISTEN', `the request inspector cannot listen on ${address}: ${reason}`, { cause });
  }
}

/**
 * Inspector is the request inspector: a Recorder the data plane is given as its observer, a
 * bounded log of exchanges, and a loopback HTTP server with the page and its JSON API. `attach`
 * names the stream handler replays go through (the agent's data plane, built after the observer).
 */
export class Inspector {
  readonly log: RequestLog;
  /** observer is what the data plane is given */
  readonly observer: ExchangeObserver;
  private handler: TunnelStreamHandler | undefined;
  private readonly server: http.Server;
  private readonly sockets = new Set<Socket>();

  constructor(readonly options: InspectorOptions) {
    this.log = new RequestLog(options.maxRequests, options.bodyLimit);
    this.observer = new Recorder(this.log);
    const deps = { log: this.log, showSecrets: options.showSecrets, replay: (r: ExchangeRecord) => this.replay(r) };
    this.server = http.createServer((req, res) => {
      handleApiRequest(deps, req, res).catch(() => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
        res.end('inspector error\n');
      });
    });
    this.server.on('connection', (s) => {
      this.sockets.add(s);
      s.once('close', () => this.sockets.delete(s));
    });
  }

  /** attach names the handler that replays go through. */
  attach(handler: TunnelStreamHandler): void {
    this.handler = handler;
  }

  /** listen binds the server; rejects with InspectorListenError (the caller carries on without it). */
  listen(): Promise<AddressInfo> {
    const { host, port } = this.options;
    const shown = `${host.includes(':') ? `[${host}]` : host}:${port}`;
    return new Promise((resolve, reject) => {
      const onError = (err: NodeJS.ErrnoException): void => reject(new InspectorListenError(shown, listenReason(err), err));
      this.server.once('error', onError);
      this.server.listen(port, host, () => {
        this.server.removeListener('error', onError);
        resolve(this.server.address() as AddressInfo);
      });
    });
  }

  /** url is the page's address once listening. */
  url(): string {
    const a = this.server.address() as AddressInfo;
    return `http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}/`;
  }

  /** close stops the server (the page's open connections too). */
  close(): Promise<void> {
    if (!this.server.listening) return Promise.resolve();
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      for (const s of this.sockets) s.destroy();
    });
  }

  private replay(record: ExchangeRecord): Promise<ReplayResult> {
    if (this.handler === undefined) return Promise.reject(new ReplayError('TUNA_INSPECTOR_REPLAY_FAILED', 'no data plane to replay through yet', 503));
    return replayExchange(this.handler, record, this.options.replayTimeoutMs ?? 30_000);
  }
}

function listenReason(err: NodeJS.ErrnoException): string {
  if (err.code === 'EADDRINUSE') return 'the port is in use';
  if (err.code === 'EADDRNOTAVAIL') return 'the address is not one of this machine';
  if (err.code === 'EACCES') return 'permission denied';
  return err.code ?? err.message;
}
