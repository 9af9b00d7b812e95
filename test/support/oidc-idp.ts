import { generateKeyPairSync, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import Provider from 'oidc-provider';

/**
 * A real OpenID Connect provider on loopback: panva's oidc-provider (a certified implementation)
 * with one confidential client and one user, and its own small sign-in and consent pages (the
 * package's development pages take any password). Keys are made fresh in each run.
 */

/** TEST_USER signs in with TEST_PASSWORD; its claims are sub and email. */
export const TEST_USER = 'ann';
export const TEST_PASSWORD = 'correct-horse-battery';
export const TEST_EMAIL = 'ann@example.test';

/** TestIdp is a running provider; `counts` tallies what it did. */
export interface TestIdp {
  issuer: string;
  clientId: string;
  clientSecret: string;
  counts: { authorizations: number; codeGrants: number; refreshGrants: number; logouts: number; wrongPasswords: number };
  close(): Promise<void>;
}

export interface TestIdpOptions {
  /** the client's redirect URI (the app's `/.tuna/oidc/callback`) */
  redirectUri: string;
  /** where the provider may send the browser after logout */
  postLogoutRedirectUri: string;
  /** ID token lifetime in seconds (default 3600) */
  idTokenSeconds?: number;
}

const page = (title: string, body: string): string => `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1>${body}</body></html>`;

function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  return new Promise((resolve, reject) => {
    let text = '';
    req.on('data', (c: Buffer) => {
      text += c.toString();
      if (text.length > 16_384) req.destroy();
    });
    req.on('end', () => resolve(new URLSearchParams(text)));
    req.on('error', reject);
  });
}

/** startTestIdp starts the provider on 127.0.0.1 (a free port) with a client for `redirectUri`. */
export async function startTestIdp(options: TestIdpOptions): Promise<TestIdp> {
  const server = http.createServer();
  const sockets = new Set<Socket>();
  server.on('connection', (s) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = 'tuna-app';
  const clientSecret = randomBytes(24).toString('base64url');
  const signingKey = { ...generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }), kid: 'idp-rs256', alg: 'RS256', use: 'sig' };
  const counts = { authorizations: 0, codeGrants: 0, refreshGrants: 0, logouts: 0, wrongPasswords: 0 };
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [options.redirectUri],
        post_logout_redirect_uris: [options.postLogoutRedirectUri],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    jwks: { keys: [signingKey] },
    cookies: { keys: [randomBytes(32).toString('base64url')] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'] },
    conformIdTokenClaims: false,
    findAccount: (_ctx: unknown, id: string) => (id === TEST_USER ? { accountId: id, claims: () => ({ sub: id, email: TEST_EMAIL, email_verified: true }) } : undefined),
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    features: { devInteractions: { enabled: false }, rpInitiatedLogout: { enabled: true } },
    pkce: { required: () => true },
    issueRefreshToken: (_ctx: unknown, client: { grantTypeAllowed(g: string): boolean }) => client.grantTypeAllowed('refresh_token'),
    ttl: { IdToken: options.idTokenSeconds ?? 3600, Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 3600, AuthorizationCode: 60, RefreshToken: 3600 },
  });
  provider.on('authorization.accepted', () => counts.authorizations++);
  provider.on('grant.success', (...args: unknown[]) => {
    const ctx = args[0] as { oidc?: { params?: { grant_type?: string } } };
    if (ctx.oidc?.params?.grant_type === 'refresh_token') counts.refreshGrants++;
    else counts.codeGrants++;
  });
  provider.on('end_session.success', () => counts.logouts++);
  const oidc = provider.callback();

  async function interaction(req: IncomingMessage, res: ServerResponse, uid: string, action: string | undefined): Promise<void> {
    const details = await provider.interactionDetails(req, res);
    const send = (html: string): void => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end(html);
    };
    const loginForm = (note: string): string =>
      page('Sign in', `${note}<form method="post" action="/interaction/${uid}/login"><input id="login" name="login" autocomplete="off"><input id="password" name="password" type="password"><button id="sign-in" type="submit">Sign in</button></form>`);
    if (req.method === 'GET') {
      if (details.prompt.name === 'login') return send(loginForm(''));
      return send(page('Allow access', `<p>tuna-app asks for ${[...(details.prompt.details.missingOIDCScope ?? [])].join(' ')}</p><form method="post" action="/interaction/${uid}/confirm"><button id="allow" type="submit">Allow</button></form>`));
    }
    const form = await readForm(req);
    if (action === 'login') {
      if (form.get('login') !== TEST_USER || form.get('password') !== TEST_PASSWORD) {
        counts.wrongPasswords++;
        return send(loginForm('<p id="error">wrong user name or password</p>'));
      }
      return provider.interactionFinished(req, res, { login: { accountId: TEST_USER } }, { mergeWithLastSubmission: false });
    }
    const { session, params, prompt } = details;
    const grant = details.grantId ? await provider.Grant.find(details.grantId) : new provider.Grant({ accountId: session!.accountId, clientId: params.client_id });
    if (prompt.details.missingOIDCScope) grant!.addOIDCScope(prompt.details.missingOIDCScope.join(' '));
    if (prompt.details.missingOIDCClaims) grant!.addOIDCClaims(prompt.details.missingOIDCClaims);
    return provider.interactionFinished(req, res, { consent: { grantId: await grant!.save() } }, { mergeWithLastSubmission: true });
  }

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const m = /^\/interaction\/([\w-]+)(?:\/(login|confirm))?$/.exec(new URL(req.url ?? '/', issuer).pathname);
    if (m === null) return oidc(req, res);
    interaction(req, res, m[1]!, m[2]).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(400, { 'content-type': 'text/plain' });
      res.end(`interaction failed: ${err instanceof Error ? err.message : String(err)}\n`);
    });
  });

  return {
    issuer,
    clientId,
    clientSecret,
    counts,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
