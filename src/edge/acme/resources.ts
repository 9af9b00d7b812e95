import * as t from 'io-ts';
import { isLeft } from 'fp-ts/lib/Either.js';
import { AcmeTransportError } from './errors.js';
import type { AcmeProblem } from './errors.js';

/** io-ts codecs of the ACME resources the client reads (RFC 8555 §7.1); unknown members are ignored. */

const Problem = t.intersection([t.type({ type: t.string }), t.partial({ detail: t.string, status: t.number })]);

/** DirectoryCodec is the directory object (RFC 8555 §7.1.1). */
export const DirectoryCodec = t.type({ newNonce: t.string, newAccount: t.string, newOrder: t.string });
/** AcmeDirectory is the decoded directory. */
export type AcmeDirectory = t.TypeOf<typeof DirectoryCodec>;

/** OrderCodec is an order object (RFC 8555 §7.1.3). */
export const OrderCodec = t.intersection([
  t.type({ status: t.string, authorizations: t.array(t.string), finalize: t.string }),
  t.partial({ certificate: t.string, error: Problem }),
]);
/** AcmeOrderBody is the decoded order. */
export type AcmeOrderBody = t.TypeOf<typeof OrderCodec>;

const Challenge = t.intersection([t.type({ type: t.string, url: t.string, status: t.string }), t.partial({ token: t.string, error: Problem })]);
/** AcmeChallenge is one challenge of an authorization (RFC 8555 §7.1.5). */
export type AcmeChallenge = t.TypeOf<typeof Challenge>;

/** AuthorizationCodec is an authorization object (RFC 8555 §7.1.4). */
export const AuthorizationCodec = t.type({
  status: t.string,
  identifier: t.type({ type: t.string, value: t.string }),
  challenges: t.array(Challenge),
});
/** AcmeAuthorization is the decoded authorization. */
export type AcmeAuthorization = t.TypeOf<typeof AuthorizationCodec>;

/** decodeResource checks a JSON body against a codec. */
export function decodeResource<A>(codec: t.Decoder<unknown, A>, value: unknown, what: string): A {
  const result = codec.decode(value);
  if (isLeft(result)) throw new AcmeTransportError(`the ACME server's ${what} is malformed`);
  return result.right;
}

/** toProblem reads a problem document, or describes a non-problem error answer. */
export function toProblem(status: number, body: Buffer): AcmeProblem {
  try {
    const decoded = Problem.decode(JSON.parse(body.toString('utf8')));
    if (!isLeft(decoded)) return { type: decoded.right.type, detail: decoded.right.detail ?? '', status };
  } catch {
    // not JSON: fall through
  }
  return { type: 'about:blank', detail: `HTTP ${status}`, status };
}

/** problemOf converts an embedded problem (order or challenge `error`). */
export function problemOf(error: { type: string; detail?: string | undefined; status?: number | undefined } | undefined): AcmeProblem | undefined {
  if (error === undefined) return undefined;
  return { type: error.type, detail: error.detail ?? '', ...(error.status !== undefined ? { status: error.status } : {}) };
}
