/**
 * Domain → Reservation (kind domain). One hostname is reserved once: when two Domains name it, the
 * older keeps it and the other is refused with reason `HostnameAlreadyReserved`.
 */
import type { Domain } from '../../crd/index.js';
import type { Reservation } from '../../model/index.js';
import type { StatusBook } from '../common/meta.js';
import { sourceOf } from '../common/meta.js';
import type { TranslateOptions } from '../types.js';
import { checkCustomDomain, checkSubdomain } from './hostname.js';
import type { Problem } from './status.js';
import { acceptObject, crdKey, crdRef, rejectObject } from './status.js';

/** DomainOutcome is what a Tunnel's domainRef finds: the accepted hostname or the Domain's own problem. */
export type DomainOutcome = { ok: true; hostname: string } | { ok: false; problem: Problem };

/** DomainResult is the Domain part of the translation. */
export interface DomainResult {
  reservations: Reservation[];
  /** by `<namespace>/<name>`: every Domain that decoded (rejected ones carry their problem) */
  outcomes: Map<string, DomainOutcome>;
}

/** hostnameOf computes a Domain's hostname, or the reason it has none. */
function hostnameOf(domain: Domain, baseDomain: string): { hostname: string } | Problem {
  const spec = domain.spec;
  if (spec.subdomain !== undefined) return checkSubdomain(spec.subdomain, baseDomain);
  // The codec guarantees exactly one of the two.
  return checkCustomDomain(spec.customDomain ?? '', baseDomain);
}

/**
 * translateDomains turns decoded Domains (oldest first) into reservations and statuses. The
 * hostname goes to `status.hostname`; a custom domain's TXT record is the reconciler's to add.
 */
export function translateDomains(domains: readonly Domain[], options: TranslateOptions, book: StatusBook): DomainResult {
  const reservations: Reservation[] = [];
  const outcomes = new Map<string, DomainOutcome>();
  const holders = new Map<string, Domain>();
  for (const domain of domains) {
    const key = crdKey(domain);
    const found = hostnameOf(domain, options.baseDomain);
    if (!('hostname' in found)) {
      rejectObject(book, domain, 'Domain', found);
      outcomes.set(key, { ok: false, problem: found });
      continue;
    }
    const { hostname } = found;
    const holder = holders.get(hostname);
    if (holder) {
      const problem: Problem = { reason: 'HostnameAlreadyReserved', message: `hostname ${hostname} is already reserved by Domain ${crdKey(holder)}, which is older` };
      rejectObject(book, domain, 'Domain', problem, { hostname });
      outcomes.set(key, { ok: false, problem });
      continue;
    }
    holders.set(hostname, domain);
    const reclaimPolicy = domain.spec.reclaimPolicy ?? 'Delete';
    reservations.push({
      id: `reservation/domain/${hostname}`,
      kind: 'domain',
      hostname,
      reclaimPolicy,
      source: sourceOf(crdRef(domain, 'Domain')),
    });
    const custom = domain.spec.customDomain !== undefined;
    acceptObject(
      book,
      domain,
      'Domain',
      `hostname ${hostname} (${custom ? 'custom domain' : 'subdomain of the edge'}; reclaimPolicy ${reclaimPolicy})`,
      custom ? 'waiting for the edge to reserve the name and verify its DNS TXT record' : 'waiting for the edge to reserve the name',
      { hostname },
    );
    outcomes.set(key, { ok: true, hostname });
  }
  return { reservations, outcomes };
}
