import { mergePolicies, stableStringify } from '../../model/index.js';
import type { Binding, CorsPolicy, HeaderModifier, HttpRoute, HttpsRedirectPolicy, RoutePolicies } from '../../model/index.js';
import { BasicAuthChecker } from './basic-auth.js';
import { IpFilter } from './ip-filter.js';
import { KeyChecker } from './key-auth.js';
import { RateLimiter } from './rate-limiter.js';
import type { Clock } from './rate-limiter.js';

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
  readonly maxBodyBytes?: number;
  readonly requestHeaders?: HeaderModifier;
  readonly responseHeaders?: HeaderModifier;
  /** the route to forward with: the policy's timeout, if any, as its request timeout */
  readonly route: HttpRoute;
}

/**
 * PolicyCompiler builds CompiledPolicies for each route of a new graph. Rate limiters and
 * basic-auth checkers hold state (buckets, remembered credentials), so they are kept across graph
 * updates while their policy and its owner (the route, or the binding whose default it is) stay
 * the same: a reload of `tuna run` must not refill every bucket. A binding's default limiter is
 * one for all its routes: the limit is per client on the binding, not per path. `sweep` drops
 * what the latest graph no longer uses.
 */
export class PolicyCompiler {
  private stateful = new Map<string, RateLimiter | BasicAuthChecker>();
  private used = new Set<string>();

  constructor(private readonly now: Clock) {}

  /** compile returns the policies in force on `route` under `binding`, or undefined when there are none. */
  compile(route: HttpRoute, binding: Binding | undefined): CompiledPolicies | undefined {
    const merged = mergePolicies(binding?.policies, route.policies);
    if (merged === undefined) return undefined;
    const ownerOf = (kind: keyof RoutePolicies): string => (route.policies?.[kind] !== undefined ? route.id : (binding?.id ?? route.id));
    const { rateLimit, basicAuth, timeoutMs } = merged;
    return {
      ...(merged.ipAccess ? { ipFilter: new IpFilter(merged.ipAccess) } : {}),
      ...(merged.httpsRedirect ? { httpsRedirect: merged.httpsRedirect } : {}),
      ...(rateLimit ? { limiter: this.reuse(`rate ${ownerOf('rateLimit')} ${stableStringify(rateLimit)}`, () => new RateLimiter(rateLimit, this.now)) as RateLimiter } : {}),
      ...(merged.cors ? { cors: merged.cors } : {}),
      ...(basicAuth ? { basicAuth: this.reuse(`basic ${ownerOf('basicAuth')} ${stableStringify(basicAuth)}`, () => new BasicAuthChecker(basicAuth)) as BasicAuthChecker } : {}),
      ...(merged.keyAuth ? { keyAuth: new KeyChecker(merged.keyAuth) } : {}),
      ...(merged.maxBodyBytes !== undefined ? { maxBodyBytes: merged.maxBodyBytes } : {}),
      ...(merged.requestHeaders ? { requestHeaders: merged.requestHeaders } : {}),
      ...(merged.responseHeaders ? { responseHeaders: merged.responseHeaders } : {}),
      route: timeoutMs === undefined ? route : { ...route, timeouts: { ...route.timeouts, requestMs: timeoutMs } },
    };
  }

  /** sweep forgets the state the graph compiled last did not use. */
  sweep(): void {
    for (const key of this.stateful.keys()) if (!this.used.has(key)) this.stateful.delete(key);
    this.used = new Set();
  }

  private reuse(key: string, make: () => RateLimiter | BasicAuthChecker): RateLimiter | BasicAuthChecker {
    this.used.add(key);
    let value = this.stateful.get(key);
    if (value === undefined) {
      value = make();
      this.stateful.set(key, value);
    }
    return value;
  }
}
