import { mergePolicies, stableStringify } from '../../model/index.js';
import type { Binding, CorsPolicy, HeaderModifier, HttpRoute, HttpsRedirectPolicy, JwtPolicy, OidcPolicy, RoutePolicies } from '../../model/index.js';
import { BasicAuthChecker } from './basic-auth.js';
import { IpFilter } from './ip-filter.js';
import { InlineKeys, RemoteKeys, fetchBoundedText, fetchJwksText } from './jwks.js';
import { JwtChecker } from './jwt.js';
import { KeyChecker } from './key-auth.js';
import { OidcChecker } from './oidc.js';
import { ProviderDiscovery } from './oidc-discovery.js';
import { RateLimiter } from './rate-limiter.js';
import type { Clock } from './rate-limiter.js';
import type { ExternalAuthFilter } from '../request-plan.js';

/**
 * CompiledPolicies is the policy set in force on one route, ready to apply: parsed ranges,
 * checkers and limiters built once per route graph, not per request. A route without policies has
 * none at all (undefined), and the data plane then takes its usual path untouched.
 */
export interface CompiledPolicies {
  readonly ipFilter?: IpFilter;
  readonly httpsRedirect?: HttpsRedirectPolicy;
  readonly limiter?: RateLimiter;
  readonly cors?: CorsPolicy;
  readonly basicAuth?: BasicAuthChecker;
  readonly keyAuth?: KeyChecker;
  readonly jwt?: JwtChecker;
  /** asked after the other checks, before the rule's own ExternalAuth filter (data-plane.ts) */
  readonly externalAuth?: ExternalAuthFilter;
  readonly oidc?: OidcChecker;
  readonly maxBodyBytes?: number;
  readonly requestHeaders?: HeaderModifier;
  readonly responseHeaders?: HeaderModifier;
  /** the route to forward with: the policy's timeout, if any, as its request timeout */
  readonly route: HttpRoute;
}

/** PolicyCompilerOptions are the collaborators of fetched JWT key sets. */
export interface PolicyCompilerOptions {
  /** told of a key-set fetch that failed; the message names the URL and the cause, never a key */
  onJwksError?: (url: string, err: unknown) => void;
  /** told of a provider configuration or key fetch of an oidc policy that failed; the message names the URL and the cause, never a secret */
  onOidcError?: (issuer: string, err: unknown) => void;
}

type Stateful = RateLimiter | BasicAuthChecker | JwtChecker | RemoteKeys | OidcChecker | ProviderDiscovery;

/**
 * PolicyCompiler builds CompiledPolicies for each route of a new graph. Rate limiters and
 * basic-auth checkers hold state (buckets, remembered credentials), so they are kept across graph
 * updates while their policy and its owner (the route, or the binding whose default it is) stay
 * the same: a reload of `tuna run` must not refill every bucket. A fetched JWT key set is one per
 * URL and refresh interval, shared by every route that names it, and kept across updates too (its
 * refresh timer stops when no route names it any more, or at `close`). A binding's default limiter is
 * one for all its routes: the limit is per client on the binding, not per path. `sweep` drops
 * what the latest graph no longer uses.
 */
export class PolicyCompiler {
  private stateful = new Map<string, Stateful>();
  private used = new Set<string>();

  constructor(
    private readonly now: Clock,
    private readonly options: PolicyCompilerOptions = {},
  ) {}

  /** compile returns the policies in force on `route` under `binding`, or undefined when there are none. */
  compile(route: HttpRoute, binding: Binding | undefined): CompiledPolicies | undefined {
    const merged = mergePolicies(binding?.policies, route.policies);
    if (merged === undefined) return undefined;
    const ownerOf = (kind: keyof RoutePolicies): string => (route.policies?.[kind] !== undefined ? route.id : (binding?.id ?? route.id));
    const { rateLimit, basicAuth, jwt, oidc, timeoutMs } = merged;
    return {
      ...(merged.ipAccess ? { ipFilter: new IpFilter(merged.ipAccess) } : {}),
      ...(merged.httpsRedirect ? { httpsRedirect: merged.httpsRedirect } : {}),
      ...(rateLimit ? { limiter: this.reuse(`rate ${ownerOf('rateLimit')} ${stableStringify(rateLimit)}`, () => new RateLimiter(rateLimit, this.now)) as RateLimiter } : {}),
      ...(merged.cors ? { cors: merged.cors } : {}),
      ...(basicAuth ? { basicAuth: this.reuse(`basic ${ownerOf('basicAuth')} ${stableStringify(basicAuth)}`, () => new BasicAuthChecker(basicAuth)) as BasicAuthChecker } : {}),
      ...(merged.keyAuth ? { keyAuth: new KeyChecker(merged.keyAuth) } : {}),
      ...(jwt ? { jwt: this.jwtChecker(ownerOf('jwt'), jwt) } : {}),
      ...(merged.externalAuth ? { externalAuth: { type: 'ExternalAuth' as const, ...merged.externalAuth } } : {}),
      ...(oidc ? { oidc: this.oidcChecker(ownerOf('oidc'), oidc) } : {}),
      ...(merged.maxBodyBytes !== undefined ? { maxBodyBytes: merged.maxBodyBytes } : {}),
      ...(merged.requestHeaders ? { requestHeaders: merged.requestHeaders } : {}),
      ...(merged.responseHeaders ? { responseHeaders: merged.responseHeaders } : {}),
      route: timeoutMs === undefined ? route : { ...route, timeouts: { ...route.timeouts, requestMs: timeoutMs } },
    };
  }

  /** sweep forgets the state the graph compiled last did not use. */
  sweep(): void {
    for (const [key, value] of this.stateful)
      if (!this.used.has(key)) {
        if (value instanceof RemoteKeys || value instanceof ProviderDiscovery) value.stop();
        this.stateful.delete(key);
      }
    this.used = new Set();
  }

  /** close stops the refresh of every fetched key set. */
  close(): void {
    this.used = new Set();
    this.sweep();
  }

  /** jwtChecker is the checker of a jwt policy; a fetched key set is marked in use even when the checker is kept. */
  private jwtChecker(owner: string, jwt: JwtPolicy): JwtChecker {
    const { jwks } = jwt;
    const remote = jwks.kind === 'url' ? this.remoteKeys(jwks.url, jwks.refreshSeconds) : undefined;
    return this.reuse(`jwt ${owner} ${stableStringify(jwt)}`, () => new JwtChecker(jwt, remote ?? new InlineKeys(jwks.kind === 'inline' ? jwks.keys : []))) as JwtChecker;
  }

  /** oidcChecker is the checker of an oidc policy; the provider's discovery is one per issuer and refresh interval, shared and kept across updates. */
  private oidcChecker(owner: string, oidc: OidcPolicy): OidcChecker {
    const onError = this.options.onOidcError ?? (() => undefined);
    const options = { fetchText: fetchBoundedText, now: this.now, onError };
    const discovery = this.reuse(`oidc-discovery ${oidc.discoveryRefreshSeconds} ${oidc.issuer}`, () => new ProviderDiscovery(oidc.issuer, oidc.discoveryRefreshSeconds * 1000, options)) as ProviderDiscovery;
    return this.reuse(`oidc ${owner} ${stableStringify(oidc)}`, () => new OidcChecker(oidc, discovery)) as OidcChecker;
  }

  private remoteKeys(url: string, refreshSeconds: number): RemoteKeys {
    const onError = this.options.onJwksError ?? (() => undefined);
    const options = { fetch: fetchJwksText, now: this.now, onError };
    return this.reuse(`jwks ${refreshSeconds} ${url}`, () => new RemoteKeys(url, refreshSeconds * 1000, options)) as RemoteKeys;
  }

  private reuse(key: string, make: () => Stateful): Stateful {
    this.used.add(key);
    let value = this.stateful.get(key);
    if (value === undefined) {
      value = make();
      this.stateful.set(key, value);
    }
    return value;
  }
}
