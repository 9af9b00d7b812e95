/** Redaction of credentials in what the inspector shows (docs/inspector.md). */

/** HeaderPair is one header line as the inspector shows it: a lowercase name and one value. */
export type HeaderPair = [name: string, value: string];

/**
 * secretHeaders carry credentials: shown as `redactedValue` unless the inspector was started with
 * `--inspect-show-secrets`. Proxy-Authorization is Authorization's twin (RFC 9110 §11.7.2).
 */
export const secretHeaders: ReadonlySet<string> = new Set(['authorization', 'proxy-authorization', 'cookie', 'set-cookie']);

/** redactedValue replaces a secret header's value. */
export const redactedValue = '[redacted]';

/** HeaderSource is a header object as Node gives it (values may repeat as arrays). */
export type HeaderSource = Readonly<Record<string, string | string[] | number | undefined>>;

/**
 * headerPairs lists headers one value a line, pseudo-headers (`:path`, …) left out: the method,
 * host and path are shown on their own. Repeated headers (Set-Cookie) keep one line each.
 */
export function headerPairs(headers: HeaderSource): HeaderPair[] {
  const pairs: HeaderPair[] = [];
  for (const [rawName, value] of Object.entries(headers)) {
    if (value === undefined || rawName.startsWith(':')) continue;
    const name = rawName.toLowerCase();
    if (Array.isArray(value)) for (const v of value) pairs.push([name, v]);
    else pairs.push([name, String(value)]);
  }
  return pairs;
}

/** redactHeaders replaces the values of secret headers, unless `showSecrets`. */
export function redactHeaders(pairs: readonly HeaderPair[], showSecrets: boolean): HeaderPair[] {
  if (showSecrets) return pairs.map(([n, v]) => [n, v]);
  return pairs.map(([n, v]) => [n, secretHeaders.has(n) ? redactedValue : v]);
}
