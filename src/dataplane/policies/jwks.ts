import type { JWTVerifyGetKey } from 'jose';
import { MAX_JWKS_BYTES, parseJwks } from '../../model/index.js';
import type { PublicJwk } from '../../model/index.js';
import { loadJose } from './jose.js';
import type { Clock } from './rate-limiter.js';
import { Refreshing } from './refreshing.js';
import type { Fetched } from './refreshing.js';

/** KeyState is what a key source can give now: its keys (and their getter for jose, made on first use), or why there is none (the route answers 503). */
export type KeyState = { kind: 'ready'; getKey: () => Promise<JWTVerifyGetKey>; kids: ReadonlySet<string> } | { kind: 'unavailable'; reason: string };

/** KeySource gives a jwt policy its verification keys. */
export interface KeySource {
  /** keys gives the keys in force, waiting for a fetch under way when there are none yet */
  keys(): KeyState | Promise<KeyState>;
  /** refreshFor is told of a token whose `kid` no key has: a fetched set is fetched again (rate-limited); resolves to the keys then in force */
  refreshFor(kid: string): KeyState | Promise<KeyState>;
}

/** readyKeys is the state of a set of keys (already checked by parseJwks); jose's key set is made once, on first use. */
export function readyKeys(keys: PublicJwk[]): KeyState {
  let getter: Promise<JWTVerifyGetKey> | undefined;
  const getKey = (): Promise<JWTVerifyGetKey> => (getter ??= loadJose().then((jose) => jose.createLocalJWKSet({ keys: keys.map((k) => ({ ...k })) })));
  return { kind: 'ready', getKey, kids: new Set(keys.flatMap((k) => (k.kid === undefined ? [] : [k.kid]))) };
}

/** InlineKeys are keys given in the graph: from a RoutePolicy's Secret or ConfigMap, or `tuna http --jwt-jwks FILE`. */
export class InlineKeys implements KeySource {
  private readonly state: KeyState;

  constructor(keys: PublicJwk[]) {
    this.state = readyKeys(keys);
  }

  keys(): KeyState {
    return this.state;
  }

  refreshFor(): KeyState {
    return this.state;
  }
}

/** JwksFetch fetches a key set's text from a URL (tests inject one; the default is fetchJwksText). */
export type JwksFetch = (url: string) => Promise<string>;

/** RemoteKeysOptions tune a fetched key set. */
export interface RemoteKeysOptions {
  fetch: JwksFetch;
  now: Clock;
  /** told of a fetch that failed (the last good keys stay in force) */
  onError: (url: string, err: unknown) => void;
  /** least time between two fetches asked for by requests (unknown kid, or no keys yet); default 10 s */
  cooldownMs?: number;
}

const defaultCooldownMs = 10_000;

/**
 * RemoteKeys is a key set the agent fetches from a URL: fetched at once, then every `refreshMs`
 * and when a token names a `kid` the set lacks — at most once per cooldown, so that tokens with
 * made-up kids cannot make the agent hammer the identity provider. A failed fetch (unreachable,
 * not 200, too large, not a valid set) keeps the last good keys; before any fetch succeeded the
 * source is unavailable and the route answers 503 with the reason.
 */
export class RemoteKeys implements KeySource {
  private readonly doc: Refreshing<KeyState>;

  constructor(
    readonly url: string,
    refreshMs: number,
    options: RemoteKeysOptions,
  ) {
    this.doc = new Refreshing<KeyState>('keys not fetched yet', {
      load: async () => {
        const parsed = parseJwks(await options.fetch(url));
        if (parsed.kind === 'invalid') throw new Error(`the key set at ${url} is invalid: ${parsed.error}`);
        return readyKeys(parsed.keys);
      },
      now: options.now,
      refreshMs,
      cooldownMs: options.cooldownMs ?? defaultCooldownMs,
      onFailure: (reason) => {
        options.onError(url, new Error(reason));
        return `the signing keys could not be fetched from ${url}: ${reason}`;
      },
    });
  }

  keys(): KeyState | Promise<KeyState> {
    return keyState(this.doc.current());
  }

  refreshFor(): KeyState | Promise<KeyState> {
    return keyState(this.doc.fresh());
  }

  /** stop ends the periodic refresh (the source left the graph). */
  stop(): void {
    this.doc.stop();
  }
}

/** keyState is a fetched key set as a KeySource gives it. */
function keyState(f: Fetched<KeyState> | Promise<Fetched<KeyState>>): KeyState | Promise<KeyState> {
  const unwrap = (x: Fetched<KeyState>): KeyState => (x.kind === 'ready' ? x.value : x);
  return f instanceof Promise ? f.then(unwrap) : unwrap(f);
}

/**
 * fetchJwksText is the default JwksFetch: GET with a 5 s deadline, no redirect followed (a
 * redirect could leave the origin the policy named), 200 only, at most MAX_JWKS_BYTES read.
 */
export function fetchJwksText(url: string): Promise<string> {
  return fetchBoundedText(url, 'application/jwk-set+json, application/json', MAX_JWKS_BYTES);
}

/** fetchBoundedText GETs a document with a 5 s deadline, no redirect followed, 200 only, at most `maxBytes` read. */
export async function fetchBoundedText(url: string, accept: string, maxBytes: number): Promise<string> {
  const res = await fetch(url, { redirect: 'error', signal: AbortSignal.timeout(5000), headers: { accept } });
  if (res.status !== 200) {
    await res.body?.cancel();
    throw new Error(`answered ${res.status}`);
  }
  return readBounded(res, maxBytes);
}

/** readBounded reads a response body as text, refusing one over `maxBytes` (leaving the loop cancels the stream). */
export async function readBounded(res: Response, maxBytes: number): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body ?? []) {
    size += chunk.length;
    if (size > maxBytes) throw new Error(`answer larger than ${maxBytes} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
