import { DEFAULT_JWKS_REFRESH_SECONDS, isJwksUrl } from '../../model/index.js';
import { RemoteKeys, fetchJwksText } from './jwks.js';
import { Refreshing, errorText } from './refreshing.js';
import type { Fetched } from './refreshing.js';
import type { JwksFetch } from './jwks.js';
import type { Clock } from './rate-limiter.js';

/** MAX_DISCOVERY_BYTES bounds a provider's configuration document. */
const MAX_DISCOVERY_BYTES = 64 * 1024;

/** ProviderConfig is what the oidc policy uses of a provider's configuration (OpenID Connect Discovery 1.0 §3). */
export interface ProviderConfig {
  issuer: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  jwksUri: string;
  endSessionEndpoint?: string;
  /** the ID token algorithms the provider names, if it does */
  idTokenAlgorithms?: string[];
}

/** ProviderState is the provider as known now: its configuration and signing keys, or why neither is there (503). */
export type ProviderState = { kind: 'ready'; config: ProviderConfig; keys: RemoteKeys } | { kind: 'unavailable'; reason: string };

/** DiscoveryOptions are the collaborators of a discovered provider (tests give their own fetch and clock). */
export interface DiscoveryOptions {
  /** GETs a document (default: 5 s deadline, no redirect, 200 only, bounded) */
  fetchText: (url: string, accept: string, maxBytes: number) => Promise<string>;
  fetchJwks?: JwksFetch;
  now: Clock;
  onError: (issuer: string, err: unknown) => void;
  cooldownMs?: number;
}

/** discoveryUrl is where an issuer's configuration is (OpenID Connect Discovery 1.0 §4). */
export function discoveryUrl(issuer: string): string {
  return `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
}

/**
 * parseProviderConfig checks a configuration document: its `issuer` must be the policy's, exactly
 * (Discovery §4.3), and the authorization, token, JWKS and end-session endpoints https (or http to
 * a loopback address). It returns the configuration, or what is wrong with it.
 */
export function parseProviderConfig(text: string, issuer: string): ProviderConfig | string {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return 'the configuration is not valid JSON';
  }
  if (typeof doc !== 'object' || doc === null) return 'the configuration is not a JSON object';
  const d = doc as Record<string, unknown>;
  if (d.issuer !== issuer) return `the configuration names another issuer (${JSON.stringify(String(d.issuer ?? '')).slice(0, 200)})`;
  const url = (name: string, required: boolean): string | undefined | Error => {
    const v = d[name];
    if (v === undefined && !required) return undefined;
    if (typeof v !== 'string' || !isJwksUrl(v)) return new Error(`${name} is ${v === undefined ? 'missing' : 'not an https URL (or http to a loopback address)'}`);
    return v;
  };
  const names = ['authorization_endpoint', 'token_endpoint', 'jwks_uri', 'end_session_endpoint'] as const;
  const values = names.map((n) => url(n, n !== 'end_session_endpoint'));
  const bad = values.find((v) => v instanceof Error);
  if (bad instanceof Error) return `the configuration's ${bad.message}`;
  const [authorizationEndpoint, tokenEndpoint, jwksUri, endSessionEndpoint] = values as (string | undefined)[];
  const algs = d.id_token_signing_alg_values_supported;
  return {
    issuer,
    authorizationEndpoint: authorizationEndpoint!,
    tokenEndpoint: tokenEndpoint!,
    jwksUri: jwksUri!,
    ...(endSessionEndpoint === undefined ? {} : { endSessionEndpoint }),
    ...(Array.isArray(algs) ? { idTokenAlgorithms: algs.filter((a): a is string => typeof a === 'string') } : {}),
  };
}

/**
 * ProviderDiscovery is one provider's configuration, fetched from `ISSUER/.well-known/openid-configuration`
 * at once, then every `refreshMs`, and again when a request finds none (at most once per cooldown,
 * 10 s). A fetch that fails keeps the last good configuration; before any succeeded the provider is
 * unavailable and the routes of its policies answer 503 with the reason. Its signing keys are a
 * RemoteKeys of the configuration's `jwks_uri` (refreshed, and fetched again on an unknown `kid`).
 */
export class ProviderDiscovery {
  private readonly doc: Refreshing<ProviderState & { kind: 'ready' }>;

  constructor(
    readonly issuer: string,
    refreshMs: number,
    options: DiscoveryOptions,
  ) {
    const url = discoveryUrl(issuer);
    this.doc = new Refreshing(`the configuration of ${issuer} is not fetched yet`, {
      load: async (prior) => {
        const config = parseProviderConfig(await options.fetchText(url, 'application/json', MAX_DISCOVERY_BYTES), issuer);
        if (typeof config === 'string') throw new Error(config);
        if (prior !== undefined && prior.keys.url === config.jwksUri) return { kind: 'ready', config, keys: prior.keys };
        prior?.keys.stop();
        const onError = (u: string, err: unknown): void => options.onError(issuer, new Error(`its signing keys at ${u}: ${errorText(err)}`));
        const keys = new RemoteKeys(config.jwksUri, DEFAULT_JWKS_REFRESH_SECONDS * 1000, { fetch: options.fetchJwks ?? fetchJwksText, now: options.now, onError });
        return { kind: 'ready', config, keys };
      },
      now: options.now,
      refreshMs,
      cooldownMs: options.cooldownMs ?? 10_000,
      onFailure: (reason) => {
        options.onError(issuer, new Error(`${url}: ${reason}`));
        return `the OpenID provider's configuration could not be fetched from ${url}: ${reason}`;
      },
    });
  }

  /** provider gives the provider in force, waiting for a fetch under way (or starting one past the cooldown) when there is none. */
  provider(): ProviderState | Promise<ProviderState> {
    const f = this.doc.current();
    const unwrap = (x: Fetched<ProviderState>): ProviderState => (x.kind === 'ready' ? x.value : x);
    return f instanceof Promise ? f.then(unwrap) : unwrap(f);
  }

  /** stop ends the refreshes (the provider left the graph). */
  stop(): void {
    this.doc.stop();
    this.doc.known()?.keys.stop();
  }
}
