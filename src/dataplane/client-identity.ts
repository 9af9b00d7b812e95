import { createHash } from 'node:crypto';
import type { X509Certificate } from 'node:crypto';

/**
 * CLIENT_CERT_HEADER carries the verified client certificate of a connection terminated in the
 * cluster to the backend. The name and the `Hash=…;Subject="…"` elements are Envoy's
 * x-forwarded-client-cert (XFCC), so backends written for Envoy gateways read it as they are; tuna
 * sends only those two elements. The data plane removes the header from every request before it
 * adds its own: a client cannot forge an identity (docs/dataplane.md).
 */
export const CLIENT_CERT_HEADER = 'x-forwarded-client-cert';

/**
 * clientCertificateHeader formats a verified peer certificate as `Hash=<hex>;Subject="<DN>"`: the
 * lowercase hex SHA-256 of its DER encoding, and its subject as an RFC 4514 string (most specific
 * RDN first, as `CN=alice,O=example`), inside an RFC 9110 quoted-string.
 */
export function clientCertificateHeader(cert: X509Certificate): string {
  const hash = createHash('sha256').update(cert.raw).digest('hex');
  return `Hash=${hash};Subject=${quoted(subjectDn(cert.subject))}`;
}

/**
 * subjectDn turns Node's subject (one `KEY=value` a line, least specific first, RFC 2253 special
 * characters already escaped) into RFC 4514 order, and escapes what a header value cannot hold:
 * a character outside printable ASCII becomes the RFC 4514 hex pairs of its UTF-8 bytes.
 */
function subjectDn(subject: string): string {
  const rdns = subject.split('\n').filter((line) => line !== '').reverse();
  return rdns.join(',').replace(/[^\x20-\x7e]/gu, (c) => [...Buffer.from(c, 'utf8')].map((b) => `\\${b.toString(16).padStart(2, '0')}`).join(''));
}

/** quoted makes an RFC 9110 §5.6.4 quoted-string: `"` and `\` become quoted-pairs. */
function quoted(value: string): string {
  return `"${value.replace(/["\\]/g, (c) => `\\${c}`)}"`;
}
