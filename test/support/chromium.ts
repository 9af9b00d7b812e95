import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/**
 * Headless Chromium (Debian's package, installed by hack/chromium.sh) driven over the Chrome
 * DevTools protocol with Node's own WebSocket client: no npm browser download, no puppeteer.
 * The browser may reach loopback only: every host name but localhost resolves to nothing, and the
 * background services that would phone home are switched off.
 */

const SCRIPT = fileURLToPath(new URL('../../hack/chromium.sh', import.meta.url));
const run = promisify(execFile);

/** installChromium installs Debian's chromium when it is missing and returns its path (call from a `before` hook). */
export async function installChromium(): Promise<string> {
  await run(SCRIPT, ['install'], { timeout: 590_000 });
  return (await run(SCRIPT, ['path'])).stdout.trim();
}

/** CdpEvent is one event the browser sent. */
interface CdpMessage {
  id?: number;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { message: string };
  sessionId?: string;
}

/** Browser is a running headless Chromium with one page attached over CDP. */
export class Browser {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (r: Record<string, unknown>) => void; reject: (e: Error) => void }>();
  private sessionId: string | undefined;

  private constructor(
    private readonly child: ChildProcess,
    private readonly ws: WebSocket,
    private readonly profile: string,
  ) {
    ws.addEventListener('message', (ev: MessageEvent) => {
      const msg = JSON.parse(String(ev.data)) as CdpMessage;
      if (msg.id === undefined) return;
      const p = this.pending.get(msg.id);
      this.pending.delete(msg.id);
      if (msg.error) p?.reject(new Error(`CDP: ${msg.error.message}`));
      else p?.resolve(msg.result ?? {});
    });
  }

  /**
   * launch starts Chromium on a free loopback debugging port and opens one blank page of
   * `width`×`height`. `loopbackNames` are host names (of the test, such as app.test) that resolve to
   * 127.0.0.1; every other name but localhost still resolves to nothing.
   */
  static async launch(binary: string, width = 1280, height = 760, loopbackNames: readonly string[] = []): Promise<Browser> {
    for (const name of loopbackNames) if (!/^[a-z0-9.-]+$/.test(name)) throw new Error(`not a host name: ${name}`);
    const profile = mkdtempSync(join(tmpdir(), 'tuna-chromium-'));
    const args = [
      '--headless=new',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--remote-debugging-address=127.0.0.1',
      '--remote-debugging-port=0',
      `--user-data-dir=${profile}`,
      '--no-first-run',
      '--no-default-browser-check',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-extensions',
      '--disable-default-apps',
      '--disable-client-side-phishing-detection',
      '--disable-features=Translate,OptimizationHints,MediaRouter,AutofillServerCommunication',
      `--host-resolver-rules=${[...loopbackNames.map((n) => `MAP ${n} 127.0.0.1`), 'MAP * ~NOTFOUND', 'EXCLUDE localhost', 'EXCLUDE 127.0.0.1'].join(', ')}`,
      `--window-size=${width},${height}`,
      'about:blank',
    ];
    const child = spawn(binary, args, { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
    const url = await new Promise<string>((resolve, reject) => {
      let text = '';
      const timer = setTimeout(() => reject(new Error(`chromium printed no DevTools address within 30 s: ${text}`)), 30_000);
      child.stderr!.on('data', (c: Buffer) => {
        text += c.toString();
        const m = /DevTools listening on (ws:\/\/127\.0\.0\.1:\d+\/\S+)/.exec(text);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`chromium exited (${String(code)}) before it listened: ${text}`));
      });
    });
    const ws = new WebSocket(url);
    await new Promise<void>((resolve, reject) => {
      ws.addEventListener('open', () => resolve(), { once: true });
      ws.addEventListener('error', () => reject(new Error('cannot open the DevTools WebSocket')), { once: true });
    });
    const browser = new Browser(child, ws, profile);
    const { targetId } = (await browser.send('Target.createTarget', { url: 'about:blank' })) as { targetId: string };
    const { sessionId } = (await browser.send('Target.attachToTarget', { targetId, flatten: true })) as { sessionId: string };
    browser.sessionId = sessionId;
    await browser.send('Page.enable');
    await browser.send('Runtime.enable');
    await browser.send('Emulation.setDeviceMetricsOverride', { width, height, deviceScaleFactor: 1, mobile: false });
    return browser;
  }

  /** send calls one CDP method on the page (or on the browser before a page is attached). */
  send(method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const id = this.nextId++;
    const message: CdpMessage = { id, method, params, ...(this.sessionId === undefined ? {} : { sessionId: this.sessionId }) };
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.ws.send(JSON.stringify(message));
    });
  }

  /** navigate loads a URL in the page. */
  async navigate(url: string): Promise<void> {
    await this.send('Page.navigate', { url });
  }

  /** evaluate runs an expression in the page and returns its value (promises awaited). */
  async evaluate<T>(expression: string): Promise<T> {
    const r = (await this.send('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true })) as { result: { value?: T }; exceptionDetails?: { text: string } };
    if (r.exceptionDetails) throw new Error(`page threw: ${r.exceptionDetails.text} in ${expression}`);
    return r.result.value as T;
  }

  /** waitFor polls an expression until it is truthy (bounded: 150 tries 100 ms apart) and returns its value. */
  async waitFor<T>(what: string, expression: string): Promise<T> {
    let last: T | undefined;
    for (let i = 0; i < 150; i++) {
      last = await this.evaluate<T>(expression);
      if (last) return last;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`the page never showed ${what} (last: ${JSON.stringify(last)})`);
  }

  /** click presses and releases the mouse at the centre of the first element `selector` matches, as a user would. */
  async click(selector: string): Promise<void> {
    const box = await this.evaluate<{ x: number; y: number } | null>(
      `(() => { const e = document.querySelector(${JSON.stringify(selector)}); if (!e) return null; e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect(); return { x: r.left + r.width / 2, y: r.top + r.height / 2 }; })()`,
    );
    if (box === null) throw new Error(`nothing on the page matches ${selector}`);
    for (const type of ['mouseMoved', 'mousePressed', 'mouseReleased']) await this.send('Input.dispatchMouseEvent', { type, x: box.x, y: box.y, button: 'left', clickCount: 1 });
  }

  /** type focuses an element and types text into it. */
  async type(selector: string, text: string): Promise<void> {
    await this.click(selector);
    await this.send('Input.insertText', { text });
  }

  /** cookies gives the cookies the browser holds for `url` (HttpOnly ones too). */
  async cookies(url: string): Promise<{ name: string; value: string; path: string; httpOnly: boolean; secure: boolean; sameSite?: string }[]> {
    const { cookies } = (await this.send('Network.getCookies', { urls: [url] })) as { cookies: { name: string; value: string; path: string; httpOnly: boolean; secure: boolean; sameSite?: string }[] };
    return cookies;
  }

  /** setCookie stores a cookie for `url`, as a server could have set it. */
  async setCookie(url: string, cookie: { name: string; value: string; path?: string; httpOnly?: boolean; sameSite?: 'Lax' | 'Strict' | 'None' }): Promise<void> {
    const { success } = (await this.send('Network.setCookie', { url, ...cookie })) as { success?: boolean };
    if (success === false) throw new Error(`the browser refused the cookie ${cookie.name}`);
  }

  /** screenshot returns a PNG of the page. */
  async screenshot(): Promise<Buffer> {
    const { data } = (await this.send('Page.captureScreenshot', { format: 'png' })) as { data: string };
    return Buffer.from(data, 'base64');
  }

  /** close ends the browser (its process group: Chromium forks helpers) and removes its profile. */
  async close(): Promise<void> {
    this.sessionId = undefined;
    await Promise.race([this.send('Browser.close').catch(() => undefined), new Promise((r) => setTimeout(r, 2_000))]);
    this.ws.close();
    if (this.child.exitCode === null && this.child.pid !== undefined) {
      try {
        process.kill(-this.child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    rmSync(this.profile, { recursive: true, force: true });
  }
}
