import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { childEnv } from './crane.js';
import { freePort } from './pebble.js';

/** oauth2-proxy (built by hack/oauth2-proxy.sh into the cache), a real authentication proxy for the external authorization tests. */

/** ensureOauth2Proxy builds oauth2-proxy when the cache lacks it (minutes, once) and returns its path. */
export async function ensureOauth2Proxy(): Promise<string> {
  const { stdout } = await promisify(execFile)(fileURLToPath(new URL('../../hack/oauth2-proxy.sh', import.meta.url)), [], { timeout: 590_000, env: childEnv() });
  const bin = /^TUNA_OAUTH2_PROXY_BIN=(.+)$/m.exec(stdout)?.[1];
  if (bin === undefined) throw new Error(`hack/oauth2-proxy.sh printed no TUNA_OAUTH2_PROXY_BIN: ${stdout}`);
  return bin;
}

/** Oauth2Proxy is a running oauth2-proxy on loopback that signs users of an htpasswd file in. */
export interface Oauth2Proxy {
  port: number;
  /** signIn posts the sign-in form and returns the session cookie (`name=value`), or undefined when refused */
  signIn(user: string, password: string): Promise<string | undefined>;
  stop(): Promise<void>;
}

/**
 * startOauth2Proxy runs oauth2-proxy on 127.0.0.1 with its htpasswd sign-in form (bcrypt `$2y$`
 * lines in `htpasswd`), plain-HTTP cookies and the X-Auth-Request-* answer headers. Its provider is
 * never contacted: only the htpasswd form signs in here.
 */
export async function startOauth2Proxy(bin: string, dir: string, htpasswd: string): Promise<Oauth2Proxy> {
  const port = await freePort();
  const file = join(dir, 'htpasswd');
  writeFileSync(file, htpasswd, { mode: 0o600 });
  const child: ChildProcess = spawn(
    bin,
    [
      `--http-address=127.0.0.1:${port}`,
      '--provider=google',
      '--client-id=tuna-test',
      '--client-secret=tuna-test-secret',
      `--cookie-secret=${randomBytes(16).toString('hex')}`,
      '--cookie-secure=false',
      '--email-domain=*',
      `--htpasswd-file=${file}`,
      '--display-htpasswd-form=true',
      '--upstream=static://202',
      '--set-xauthrequest=true',
      '--redirect-url=http://127.0.0.1/oauth2/callback',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let log = '';
  child.stdout?.on('data', (c: Buffer) => (log += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (log += c.toString()));
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`oauth2-proxy exited (${child.exitCode}): ${log}`);
    if (await answers(port)) break;
    if (Date.now() > deadline) throw new Error(`oauth2-proxy did not answer on 127.0.0.1:${port} within 20 s: ${log}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    port,
    signIn: (user, password) => signIn(port, user, password),
    stop: async () => {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

/** answers is true once /ping answers 200. */
function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/ping', agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
    req.end();
  });
}

function signIn(port: number, user: string, password: string): Promise<string | undefined> {
  const form = new URLSearchParams({ username: user, password }).toString();
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path: '/oauth2/sign_in', method: 'POST', agent: false, headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(Buffer.byteLength(form)) } },
      (res) => {
        res.resume();
        const cookie = [res.headers['set-cookie'] ?? []].flat().find((c) => c.startsWith('_oauth2_proxy='));
        resolve(res.statusCode === 302 && cookie !== undefined ? cookie.split(';')[0] : undefined);
      },
    );
    req.on('error', reject);
    req.end(form);
  });
}
