/**
 * RoutePolicy attaches route policies (src/model/policies.ts) to a Gateway, an HTTPRoute or an
 * Ingress of its own namespace by `spec.targetRefs` (GEP-713 direct policy attachment), or to one
 * HTTPRoute rule through an `ExtensionRef` filter. The codec checks shapes only; values (CIDRs,
 * rates, header names) are the translator's check, so that a bad value becomes a status reason.
 * See docs/crds.md and docs/policies.md.
 */
import * as t from 'io-ts';
import { closedObject } from '../codec/index.js';
import { localObjectReferenceCodec, nonEmptyString } from './fields.js';
import { resourceCodec } from './resource.js';

const targetRefCodec = closedObject('RoutePolicyTargetRef', { group: t.string, kind: nonEmptyString, name: nonEmptyString }, { sectionName: nonEmptyString });

const headerValueCodec = closedObject('HTTPHeader', { name: t.string, value: t.string }, {});
const headerModifierCodec = closedObject('HeaderModifier', {}, { set: t.array(headerValueCodec), add: t.array(headerValueCodec), remove: t.array(t.string) });

const jwksRefCodec = closedObject('JWKSRef', { name: nonEmptyString }, { key: nonEmptyString });

const jwtCodec = closedObject(
  'JWT',
  {
    issuers: t.array(t.string),
    audiences: t.array(t.string),
    jwks: closedObject('JWKS', {}, { secretRef: jwksRefCodec, configMapRef: jwksRefCodec, url: t.string, refreshInterval: t.string }),
  },
  {
    realm: t.string,
    clockSkew: t.string,
    cookie: t.string,
    header: t.string,
    claimToHeaders: t.array(closedObject('ClaimToHeader', { claim: nonEmptyString, header: t.string }, {})),
    require: t.array(closedObject('ClaimRequirement', { claim: nonEmptyString }, { equals: t.string, contains: t.string, scope: t.string })),
  },
);

const externalAuthCodec = closedObject(
  'ExternalAuth',
  { serviceRef: closedObject('ExternalAuthServiceRef', { name: nonEmptyString, port: t.number }, {}) },
  { path: t.string, allowedHeaders: t.array(t.string), allowedResponseHeaders: t.array(t.string), forwardBodyBytes: t.number, timeout: t.string },
);

const oidcCodec = closedObject(
  'OIDC',
  { issuer: t.string, clientId: t.string, secretRef: localObjectReferenceCodec },
  {
    scopes: t.array(t.string),
    cookieName: t.string,
    sessionLifetime: t.string,
    discoveryRefreshInterval: t.string,
    claimToHeaders: t.array(closedObject('ClaimToHeader', { claim: nonEmptyString, header: t.string }, {})),
  },
);

const policyFields = {
  basicAuth: closedObject('BasicAuth', { secretRef: localObjectReferenceCodec }, { realm: t.string }),
  keyAuth: closedObject('KeyAuth', { header: t.string, secretRef: localObjectReferenceCodec }, {}),
  jwt: jwtCodec,
  externalAuth: externalAuthCodec,
  oidc: oidcCodec,
  ipAccess: closedObject('IPAccess', {}, { allow: t.array(t.string), deny: t.array(t.string) }),
  rateLimit: closedObject('RateLimit', { requests: t.number, periodSeconds: t.number }, { burst: t.number }),
  httpsRedirect: closedObject('HTTPSRedirect', {}, { statusCode: t.number, port: t.number }),
  requestHeaders: headerModifierCodec,
  responseHeaders: headerModifierCodec,
  maxBodyBytes: t.number,
  cors: closedObject(
    'CORS',
    { allowOrigins: t.array(t.string) },
    { allowMethods: t.array(t.string), allowHeaders: t.array(t.string), exposeHeaders: t.array(t.string), allowCredentials: t.boolean, maxAgeSeconds: t.number },
  ),
  timeout: t.string,
};

/** ROUTE_POLICY_FIELDS names the policy fields of a RoutePolicy spec, in the order they are listed in docs/crds.md. */
export const ROUTE_POLICY_FIELDS = Object.keys(policyFields) as (keyof typeof policyFields)[];

/** routePolicySpecCodec decodes `RoutePolicy.spec`: targetRefs (may be empty for a policy used only by ExtensionRef filters) and the policies. */
export const routePolicySpecCodec = closedObject('RoutePolicySpec', {}, { targetRefs: t.array(targetRefCodec), ...policyFields });

/** RoutePolicySpec is the decoded `RoutePolicy.spec`. */
export type RoutePolicySpec = t.TypeOf<typeof routePolicySpecCodec>;

/** RoutePolicyTargetRef is one entry of `spec.targetRefs`. */
export type RoutePolicyTargetRef = t.TypeOf<typeof targetRefCodec>;

/** routePolicyCodec decodes a whole `tuna.dev/v1alpha1` RoutePolicy. */
export const routePolicyCodec = resourceCodec('RoutePolicy', routePolicySpecCodec);

/** RoutePolicy is a decoded RoutePolicy object. */
export type RoutePolicy = t.TypeOf<typeof routePolicyCodec>;
