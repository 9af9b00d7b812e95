/**
 * Domain reserves a hostname for the account at the edge: a subdomain of the edge's base domain
 * (`spec.subdomain: shop` → `shop.<baseDomain>`) or a custom domain the edge verifies by a DNS TXT
 * record (`spec.customDomain: shop.example.com`). Exactly one of the two. See docs/crds.md.
 */
import * as t from 'io-ts';
import { closedObject } from '../codec/index.js';
import { nonEmptyString, reclaimPolicyCodec } from './fields.js';
import { resourceCodec } from './resource.js';

const domainSpecFields = closedObject(
  'DomainSpec',
  {},
  { subdomain: nonEmptyString, customDomain: nonEmptyString, reclaimPolicy: reclaimPolicyCodec },
);

type DomainSpecFields = t.TypeOf<typeof domainSpecFields>;

/**
 * domainSpecCodec decodes `Domain.spec` and enforces exactly one of subdomain / customDomain (the
 * CRD says the same with a CEL rule). Hostname syntax is the translator's check: it gives the
 * precise reason (InvalidHostname, HostnameIsIPAddress) on the object's status.
 */
export const domainSpecCodec = new t.Type<DomainSpecFields, unknown, unknown>(
  'DomainSpec',
  (u): u is DomainSpecFields => domainSpecFields.is(u) && (u.subdomain === undefined) !== (u.customDomain === undefined),
  (u, c) => {
    const fields = domainSpecFields.validate(u, c);
    if (fields._tag === 'Left') return fields;
    const spec = fields.right;
    if ((spec.subdomain === undefined) === (spec.customDomain === undefined))
      return t.failure(u, c, 'exactly one of subdomain or customDomain is required');
    return t.success(spec);
  },
  t.identity,
);

/** DomainSpec is the decoded `Domain.spec`. */
export type DomainSpec = t.TypeOf<typeof domainSpecCodec>;

/** domainCodec decodes a whole `tuna.dev/v1alpha1` Domain. */
export const domainCodec = resourceCodec('Domain', domainSpecCodec);

/** Domain is a decoded Domain object. */
export type Domain = t.TypeOf<typeof domainCodec>;
