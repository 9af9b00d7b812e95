import tls from 'node:tls';
import { X509Certificate } from 'node:crypto';
import type { SecretRef } from '../model/index.js';

/** CertificatePair is a PEM certificate chain and its private key (a `kubernetes.io/tls` Secret). */
export interface CertificatePair {
  cert: string | Buffer;
  key: string | Buffer;
}

/**
 * CertificateSource gives the key material of the Secrets that in-cluster TLS termination names.
 * Key material stays behind this interface: it never enters the route graph, a log or the edge.
 */
export interface CertificateSource {
  /** get returns the pair held by the Secret, or undefined when it is missing or not TLS */
  get(ref: SecretRef): CertificatePair | undefined;
}

/** StaticCertificateSource holds pairs by `namespace/name` (the file provider, tests). */
export class StaticCertificateSource implements CertificateSource {
  private pairs = new Map<string, CertificatePair>();

  /** set stores the pair of one Secret. */
  set(ref: SecretRef, pair: CertificatePair): void {
    this.pairs.set(`${ref.namespace}/${ref.name}`, pair);
  }

  /** replace swaps the whole set (manifest reload). */
  replace(pairs: Map<string, CertificatePair>): void {
    this.pairs = pairs;
  }

  /** get returns the pair of a Secret. */
  get(ref: SecretRef): CertificatePair | undefined {
    return this.pairs.get(`${ref.namespace}/${ref.name}`);
  }
}

/** LoadedCertificate is a pair turned into a secure context, with the names it is valid for. */
export interface LoadedCertificate {
  pair: CertificatePair;
  context: tls.SecureContext;
  cert: X509Certificate;
}

/**
 * SecureContextCache builds one `tls.SecureContext` per distinct pair and picks, for an SNI
 * name, the first listed certificate valid for it (RFC 6125 host check), else the first one.
 */
export class SecureContextCache {
  private readonly cache = new WeakMap<CertificatePair, LoadedCertificate>();

  constructor(private readonly source: CertificateSource) {}

  /** select returns the context to present for `servername` among `refs`, or undefined. */
  select(refs: readonly SecretRef[], servername: string | undefined): tls.SecureContext | undefined {
    return this.choose(refs, servername)?.context;
  }

  /** choose returns the certificate to present for `servername` among `refs` (its pair and context), or undefined. */
  choose(refs: readonly SecretRef[], servername: string | undefined): LoadedCertificate | undefined {
    const loaded = refs.map((r) => this.load(r)).filter((c): c is LoadedCertificate => c !== undefined);
    const fit = servername ? loaded.find((c) => c.cert.checkHost(servername) !== undefined) : undefined;
    return fit ?? loaded[0];
  }

  private load(ref: SecretRef): LoadedCertificate | undefined {
    const pair = this.source.get(ref);
    if (!pair) return undefined;
    const hit = this.cache.get(pair);
    if (hit) return hit;
    try {
      const loaded = { pair, context: tls.createSecureContext({ cert: pair.cert, key: pair.key }), cert: new X509Certificate(pair.cert) };
      this.cache.set(pair, loaded);
      return loaded;
    } catch {
      // A Secret with a malformed pair cannot be served; the next listed certificate may be.
      return undefined;
    }
  }
}
