/**
 * One normal form of the request path, computed before route matching and sent to the backend
 * (RFC 3986 §5.2.4). Without it `/public/../admin` matched a `/public` prefix route while a
 * backend that normalises served `/admin`: the route and the service disagreed on the resource.
 *
 * The choices follow Envoy Gateway's defaults for every listener (its `ClientTrafficPolicy.path`
 * unset: Envoy's `normalize_path: true`, `merge_slashes: true`,
 * `path_with_escaped_slashes_action: UNESCAPE_AND_REDIRECT`), see docs/dataplane.md "Path
 * normalisation":
 *
 * - percent-encoded unreserved characters are decoded and other percent-encodings get uppercase hex
 *   (RFC 3986 §6.2.2.1, §6.2.2.2); a `%` not followed by two hex digits is refused;
 * - dot segments are removed (RFC 3986 §5.2.4; a `..` above the root is dropped, as in §5.2.4);
 * - then runs of slashes are merged into one (`/a//../b` is `/a/b`: the `..` removed the empty segment);
 * - an encoded slash (`%2F`, `%5C`) or a backslash is a separator in disguise: the client is
 *   redirected to the path with it unescaped (and normalised), so the client, the router and the
 *   backend all see the same path.
 */

/** NormalizedPath is the outcome of normalising one request path. */
export type NormalizedPath =
  /** route and forward `path` */
  | { kind: 'ok'; path: string }
  /** answer 307 with `Location: path` (the path held an encoded slash or a backslash) */
  | { kind: 'redirect'; path: string }
  /** answer 400; `reason` says what is wrong */
  | { kind: 'invalid'; reason: string };

const HEX = '0123456789ABCDEF';

/** normalizeRequestPath returns the normal form of a request path (no query), or why it has none. */
export function normalizeRequestPath(path: string): NormalizedPath {
  if (!path.startsWith('/')) return { kind: 'invalid', reason: 'the path must start with /' };
  const decoded = decodeUnreserved(path);
  if (typeof decoded === 'string') return { kind: 'invalid', reason: decoded };
  // Envoy's order: RFC 3986 normalisation first, then merge_slashes.
  const normal = removeDotSegments(decoded.text).replace(/\/{2,}/g, '/');
  return decoded.hadEscapedSlash ? { kind: 'redirect', path: normal } : { kind: 'ok', path: normal };
}

/**
 * decodeUnreserved decodes `%XX` of unreserved characters, uppercases the hex of the others, and
 * turns `%2F`, `%5C` and `\` into `/` (noting it). Returns an error message for a bad `%`.
 */
function decodeUnreserved(path: string): { text: string; hadEscapedSlash: boolean } | string {
  if (!path.includes('%') && !path.includes('\\')) return { text: path, hadEscapedSlash: false };
  let out = '';
  let hadEscapedSlash = false;
  for (let i = 0; i < path.length; i++) {
    const c = path[i]!;
    if (c === '\\') {
      out += '/';
      hadEscapedSlash = true;
      continue;
    }
    if (c !== '%') {
      out += c;
      continue;
    }
    const hi = hexValue(path.charCodeAt(i + 1));
    const lo = hexValue(path.charCodeAt(i + 2));
    if (hi < 0 || lo < 0) return `invalid percent-encoding at offset ${i} of the path (RFC 3986 §2.1: % must be followed by two hex digits)`;
    const byte = hi * 16 + lo;
    i += 2;
    if (byte === 0x2f || byte === 0x5c) {
      out += '/';
      hadEscapedSlash = true;
    } else if (isUnreserved(byte)) out += String.fromCharCode(byte);
    else out += `%${HEX[hi]}${HEX[lo]}`;
  }
  return { text: out, hadEscapedSlash };
}

function hexValue(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  if (code >= 0x41 && code <= 0x46) return code - 0x41 + 10;
  if (code >= 0x61 && code <= 0x66) return code - 0x61 + 10;
  return -1;
}

/** isUnreserved: ALPHA / DIGIT / "-" / "." / "_" / "~" (RFC 3986 §2.3). */
function isUnreserved(byte: number): boolean {
  return (
    (byte >= 0x41 && byte <= 0x5a) ||
    (byte >= 0x61 && byte <= 0x7a) ||
    (byte >= 0x30 && byte <= 0x39) ||
    byte === 0x2d ||
    byte === 0x2e ||
    byte === 0x5f ||
    byte === 0x7e
  );
}

/**
 * removeDotSegments is RFC 3986 §5.2.4 for an absolute path: `.` segments vanish, `..` removes
 * the segment before it (none above the root), and a path ending in `.` or `..` keeps its
 * trailing slash (`/a/b/..` → `/a/`).
 */
export function removeDotSegments(path: string): string {
  if (!path.includes('.')) return path;
  const segments = path.split('/').slice(1);
  const out: string[] = [];
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i]!;
    const isLast = i === segments.length - 1;
    if (seg === '.' || seg === '..') {
      if (seg === '..') out.pop();
      if (isLast) out.push('');
      continue;
    }
    out.push(seg);
  }
  return `/${out.join('/')}`;
}
