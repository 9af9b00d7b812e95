import { createHash } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import tls from 'node:tls';
import { CodedError, filterBackend } from '../model/index.js';
import type { BackendProtocol, BackendSubjectAltName, BackendTls, RouteGraph, ServiceBackend } from '../model/index.js';
import type { CertificatePair, CertificateSource } from './certificates.js';
import { Http1Client } from './upstream-http1.js';
import type { Http1ClientOptions } from './upstream-http1.js';
import { Http2Client } from './upstream-http2.js';
import type { UpstreamClient } from './upstream.js';

/** BackendTlsSettings are the TLS options of the connections to one backend, and the key their pool is kept under. */
export interface BackendTlsSettings {
  key: string;
  options: tls.ConnectionOptions;
}

/** SubjectAltNameError: the backend's certificate carries none of the names a BackendTLSPolicy's subjectAltNames list. */
export class SubjectAltNameError extends CodedError<'TUNA_BACKEND_SAN_MISMATCH'> {
  constructor(wanted: readonly BackendSubjectAltName[]) {
    super('TUNA_BACKEND_SAN_MISMATCH', `the certificate carries none of the subjectAltNames ${wanted.map((n) => `${n.type}:${n.value}`).join(', ')}`);
  }
}

/**
 * checkSubjectAltNames is the identity check of a backend with `subjectAltNames` (GEP-1897): the
 * certificate must carry at least one of them; a Hostname by the RFC 6125 rules Node applies to
 * server names (wildcards included), a URI (a SPIFFE id) exactly. The policy's hostname is then
 * the SNI only and is not checked.
 */
export function checkSubjectAltNames(wanted: readonly BackendSubjectAltName[], cert: tls.PeerCertificate): Error | undefined {
  const uris = sanEntries(cert.subjectaltname ?? '')
    .filter((e) => e.type === 'URI')
    .map((e) => e.value);
  const hasDns = sanEntries(cert.subjectaltname ?? '').some((e) => e.type === 'DNS');
  for (const n of wanted) {
    if (n.type === 'URI' && uris.includes(n.value)) return undefined;
    // without a DNS SAN, Node would fall back to the subject CN: a policy naming SANs asks for SANs
    if (n.type === 'Hostname' && hasDns && tls.checkServerIdentity(n.value, cert) === undefined) return undefined;
  }
  return new SubjectAltNameError(wanted);
}

/** sanEntries splits Node's `subjectaltname` text (`DNS:a, URI:b`; a value with special characters is JSON-quoted). */
function sanEntries(text: string): { type: string; value: string }[] {
  const out: { type: string; value: string }[] = [];
  const entry = /([A-Za-z ]+):("(?:[^"\\]|\\.)*"|[^,]*)(?:, |$)/g;
  for (const m of text.matchAll(entry)) {
    const raw = m[2] ?? '';
    let value = raw;
    if (raw.startsWith('"')) {
      try {
        value = JSON.parse(raw) as string;
      } catch {
        value = raw;
      }
    }
    out.push({ type: (m[1] ?? '').trim(), value });
  }
  return out;
}

/**
 * backendTlsSettings turns a backend's TLS into connection options: SNI = serverName; the
 * certificate must chain to the policy's CA bundle (or Node's bundled well-known CAs for
 * `system`) and match serverName, or one of subjectAltNames when they are given; the Gateway's
 * client certificate is presented when its Secret holds a pair. The key covers every one of these
 * (the pair by digest), so connections made for one policy are never reused for another.
 */
export function backendTlsSettings(t: BackendTls, pair: CertificatePair | undefined): BackendTlsSettings {
  const sans = t.subjectAltNames;
  const options: tls.ConnectionOptions = {
    servername: t.serverName,
    rejectUnauthorized: true,
    checkServerIdentity: sans ? (_host, cert) => checkSubjectAltNames(sans, cert) : (_host, cert) => tls.checkServerIdentity(t.serverName, cert),
    ...(t.ca.kind === 'pem' ? { ca: t.ca.pem } : {}),
    ...(pair ? { cert: pair.cert, key: pair.key } : {}),
  };
  const digest = createHash('sha256')
    .update(JSON.stringify({ serverName: t.serverName, ca: t.ca, sans: sans ?? null, cert: pair ? pair.cert.toString() : null, key: pair ? pair.key.toString() : null }))
    .digest('hex');
  return { key: digest, options };
}

/** TlsClientSet is the pooled clients of one set of backend TLS settings. */
interface TlsClientSet {
  http: Http1Client;
  h2: Http2Client;
  settings: BackendTlsSettings;
}

/**
 * BackendTlsClients keeps one HTTPS (HTTP/1.1) and one HTTP/2-over-TLS client per distinct
 * backend TLS settings (backendTlsSettings' key), so pooled connections are shared only by
 * backends verified the same way and presenting the same client certificate.
 */
export class BackendTlsClients {
  readonly #sets = new Map<string, TlsClientSet>();
  /** settings per BackendTls object of the graph, with the pair they were made with (a rotated Secret makes new ones) */
  readonly #settings = new WeakMap<BackendTls, { pair: CertificatePair | undefined; settings: BackendTlsSettings }>();

  constructor(
    private readonly certificates: CertificateSource,
    private readonly http1: Partial<Http1ClientOptions> = {},
  ) {}

  /** settingsOf returns the TLS settings of a backend's TLS (cached while its client pair is the same object). */
  settingsOf(t: BackendTls): BackendTlsSettings {
    const pair = t.clientCertificate ? this.certificates.get(t.clientCertificate) : undefined;
    const hit = this.#settings.get(t);
    if (hit && hit.pair === pair) return hit.settings;
    const settings = backendTlsSettings(t, pair);
    this.#settings.set(t, { pair, settings });
    return settings;
  }

  /** clientFor returns the client of a TLS backend: HTTP/2 over TLS (ALPN h2) for h2 and h2c ports, HTTPS/1.1 otherwise. */
  clientFor(t: BackendTls, protocol: BackendProtocol): UpstreamClient {
    const settings = this.settingsOf(t);
    let set = this.#sets.get(settings.key);
    if (!set) {
      set = { http: new Http1Client({ ...this.http1, tls: settings.options }), h2: new Http2Client({ mode: 'h2', tls: settings.options }), settings };
      this.#sets.set(settings.key, set);
    }
    return protocol === 'h2' || protocol === 'h2c' ? set.h2 : set.http;
  }

  /**
   * sweep lets go of the pools no backend of `backends` uses any more: idle connections are closed
   * at once, busy ones finish their request (Http1Client.release, Http2Client.close are graceful).
   */
  sweep(backends: readonly ServiceBackend[]): void {
    const live = new Set(backends.flatMap((b) => (b.tls ? [this.settingsOf(b.tls).key] : [])));
    for (const [key, set] of this.#sets) {
      if (live.has(key)) continue;
      set.http.release();
      set.h2.close();
      this.#sets.delete(key);
    }
  }

  /** size is the number of TLS settings with pools (tests). */
  get size(): number {
    return this.#sets.size;
  }

  /** close destroys every pooled connection. */
  close(): void {
    for (const set of this.#sets.values()) {
      set.http.close();
      set.h2.close();
    }
    this.#sets.clear();
  }
}

/**
 * upgradeRequest opens the HTTP/1.1 request of a WebSocket (or other) upgrade to a backend: over
 * TLS with the backend's settings when it has a BackendTLSPolicy, plain text otherwise. Upgraded
 * connections are not pooled (`agent: false`).
 */
export function upgradeRequest(options: http.RequestOptions, backend: ServiceBackend, clients: BackendTlsClients): http.ClientRequest {
  if (!backend.tls) return http.request({ ...options, agent: false });
  return https.request({ ...options, ...clients.settingsOf(backend.tls).options, agent: false });
}

/** serviceBackendsOf lists the Service backends of a graph's HTTP routes that speak TLS, those of mirrors and external authorization included. */
export function serviceBackendsOf(graph: RouteGraph): ServiceBackend[] {
  const out: ServiceBackend[] = [];
  for (const v of graph.virtualHosts)
    for (const r of v.routes) {
      for (const b of r.backends) if (b.kind === 'service' && b.tls) out.push(b);
      for (const f of r.filters) {
        const b = filterBackend(f);
        if (b?.tls) out.push(b);
      }
    }
  return out;
}
