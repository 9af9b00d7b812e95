import { X509Certificate } from 'node:crypto';
import type { CertificatePair, CertificateSource } from '../dataplane/index.js';
import type { RouteGraph, SecretRef } from '../model/index.js';
import { filterBackend } from '../model/index.js';

/**
 * AcceptedCertificates is the operator's CertificateSource: after each sync it holds the pairs of
 * exactly the Secrets the graph's `terminate-in-cluster` listeners and TLS backends (client certificates) name, i.e. those the translators
 * accepted (existence, type, ReferenceGrant, a PEM pair that matches). A Secret that was read but
 * not accepted never reaches the data plane. A pair whose text did not change is kept as the same
 * object, so the data plane's SecureContextCache does not rebuild its context on every sync.
 */
export class AcceptedCertificates implements CertificateSource {
  #pairs = new Map<string, CertificatePair>();

  /** update swaps in the pairs the graph's terminating listeners name, from `read` (by `namespace/name`). */
  update(graph: RouteGraph, read: ReadonlyMap<string, CertificatePair>): void {
    const next = new Map<string, CertificatePair>();
    const take = (ref: SecretRef): void => {
      const key = keyOf(ref);
      const pair = read.get(key);
      if (pair === undefined || next.has(key)) return;
      const before = this.#pairs.get(key);
      next.set(key, before !== undefined && samePair(before, pair) ? before : pair);
    };
    for (const l of graph.listeners) if (l.tls?.mode === 'terminate-in-cluster') for (const ref of l.tls.certificates) take(ref);
    // the client certificates Gateways present to TLS backends (spec.tls.backend.clientCertificateRef)
    for (const v of graph.virtualHosts)
      for (const r of v.routes) {
        for (const b of r.backends) if (b.kind === 'service' && b.tls?.clientCertificate) take(b.tls.clientCertificate);
        for (const f of r.filters) {
          const ref = filterBackend(f)?.tls?.clientCertificate;
          if (ref) take(ref);
        }
      }
    this.#pairs = next;
  }

  /** get returns the pair of an accepted Secret. */
  get(ref: SecretRef): CertificatePair | undefined {
    return this.#pairs.get(keyOf(ref));
  }

  /** expiries says when the certificate of each Secret held expires (ms since the epoch), sorted by Secret; a certificate that does not parse is left out. */
  expiries(): { secret: string; notAfter: number }[] {
    return this.names().flatMap((secret) => {
      const notAfter = notAfterOf(this.#pairs.get(secret)!);
      return notAfter === undefined ? [] : [{ secret, notAfter }];
    });
  }

  /** names lists the `namespace/name` of every Secret held (no key material), sorted. */
  names(): string[] {
    return [...this.#pairs.keys()].sort();
  }
}

/** notAfters keeps each pair's parsed expiry: a pair that did not change is the same object across syncs (update), so it is parsed once. */
const notAfters = new WeakMap<CertificatePair, number | undefined>();

function notAfterOf(pair: CertificatePair): number | undefined {
  if (notAfters.has(pair)) return notAfters.get(pair);
  let notAfter: number | undefined;
  try {
    notAfter = new X509Certificate(pair.cert).validToDate.getTime();
  } catch {
    notAfter = undefined;
  }
  notAfters.set(pair, notAfter);
  return notAfter;
}

function keyOf(ref: SecretRef): string {
  return `${ref.namespace}/${ref.name}`;
}

function samePair(a: CertificatePair, b: CertificatePair): boolean {
  return a.cert.toString() === b.cert.toString() && a.key.toString() === b.key.toString();
}
