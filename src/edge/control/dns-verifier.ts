import { Resolver } from 'node:dns/promises';

/**
 * Custom-domain ownership: the user publishes a TXT record `_tuna-challenge.<hostname>` holding the
 * reservation's verification token (the same shape as ACME's `_acme-challenge`, RFC 8555 §8.4).
 */

/** DomainVerifier reports whether a hostname's challenge record holds the token. */
export type DomainVerifier = (hostname: string, token: string) => Promise<boolean>;

/** challengeName is the TXT record name checked for a hostname. */
export function challengeName(hostname: string): string {
  return `_tuna-challenge.${hostname}`;
}

/** createDnsVerifier returns a verifier using the given DNS servers (`127.0.0.1:5353` in tests), or the system's. */
export function createDnsVerifier(servers?: readonly string[], timeoutMs = 2000): DomainVerifier {
  const resolver = new Resolver({ timeout: timeoutMs, tries: 2 });
  if (servers?.length) resolver.setServers([...servers]);
  return async (hostname, token) => {
    if (token === '') return false;
    try {
      const records = await resolver.resolveTxt(challengeName(hostname));
      // A TXT record may be split into several strings (RFC 7208 §3.3): join them.
      return records.some((chunks) => chunks.join('') === token);
    } catch {
      return false;
    }
  };
}
