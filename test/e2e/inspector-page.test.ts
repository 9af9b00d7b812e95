import { expect } from 'chai';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Browser, installChromium } from '../support/chromium.js';
import { sendVia, startInspectorRig } from '../support/inspector.js';
import type { InspectorRig } from '../support/inspector.js';

/**
 * The inspector's page in headless Chromium (Debian's package; installed by hack/chromium.sh when
 * missing): a request made through the tunnel appears, is opened, and replayed, and the backend
 * sees it twice. Screenshots go to $TUNA_INSPECTOR_SCREENSHOTS when set (hack/inspector-screenshots.sh
 * writes docs/inspector/ so), else to a scratch folder.
 */
describe('the request inspector page in headless Chromium', function () {
  this.timeout(60_000);
  let chromium = '';
  let rig: InspectorRig | undefined;
  let browser: Browser | undefined;
  let scratch = '';

  before(async function () {
    this.timeout(600_000);
    chromium = await installChromium();
  });

  beforeEach(() => {
    scratch = mkdtempSync(join(tmpdir(), 'tuna-inspector-shots-'));
  });

  afterEach(async () => {
    await browser?.close();
    await rig?.close();
    browser = undefined;
    rig = undefined;
    rmSync(scratch, { recursive: true, force: true });
  });

  function saveShot(name: string, png: Buffer): void {
    expect(png.subarray(0, 8).toString('hex')).to.equal('89504e470d0a1a0a');
    const dir = process.env.TUNA_INSPECTOR_SCREENSHOTS === undefined ? scratch : resolve(process.env.TUNA_INSPECTOR_SCREENSHOTS);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, name), png);
  }

  it('shows a request made through the tunnel, opens it with secrets redacted, filters, and replays it to the backend', async () => {
    rig = await startInspectorRig(['--inspect', '127.0.0.1:0']);
    const res = await sendVia(rig.httpPort, {
      method: 'POST',
      path: '/orders?id=42',
      headers: { authorization: 'Bearer client-secret', 'content-type': 'application/json', 'user-agent': 'curl/8.5.0' },
      body: '{"item":"tuna","count":2}',
    });
    expect(res.status).to.equal(200);
    await sendVia(rig.httpPort, { path: '/health', headers: { 'user-agent': 'curl/8.5.0' } });
    await sendVia(rig.httpPort, { path: '/missing.png', headers: { 'user-agent': 'curl/8.5.0' } });

    browser = await Browser.launch(chromium);
    await browser.navigate(rig.inspectorUrl!);
    const row = '#requests tbody tr';
    await browser.waitFor('the request in the list', `[...document.querySelectorAll('${row}')].some((tr) => tr.textContent.includes('/orders?id=42') && tr.textContent.includes('200'))`);
    expect(await browser.evaluate<number>(`document.querySelectorAll('${row}').length`)).to.equal(3);

    const id = await browser.evaluate<string>(`[...document.querySelectorAll('${row}')].find((tr) => tr.textContent.includes('/orders?id=42')).dataset.id`);
    await browser.click(`${row}[data-id="${id}"]`);
    await browser.waitFor('the opened request', `!document.getElementById('detail').hidden && document.getElementById('request-body').textContent.includes('"item":"tuna"')`);
    const shown = await browser.evaluate<string>(`document.getElementById('detail').innerText`);
    expect(shown).to.contain('POST app.test/orders?id=42');
    expect(shown).to.contain('[redacted]');
    expect(shown).to.contain('hello /orders?id=42');
    const all = await browser.evaluate<string>('document.body.innerText');
    expect(all).not.to.contain('client-secret');
    expect(all).not.to.contain('backend-secret');
    saveShot('inspector-request.png', await browser.screenshot());

    // Search narrows the list; clearing it brings the rows back.
    await browser.type('#search', 'health');
    await browser.waitFor('the filtered list', `document.querySelectorAll('${row}').length === 1 && document.querySelector('${row}').textContent.includes('/health')`);
    await browser.evaluate(`(() => { const s = document.getElementById('search'); s.value = ''; s.dispatchEvent(new Event('input')); })()`);
    await browser.waitFor('the whole list again', `document.querySelectorAll('${row}').length === 3`);

    await browser.click('#replay');
    const result = await browser.waitFor<string>('the replay result', `(/replayed r\\d+ as r\\d+: 200/.exec(document.getElementById('replay-result').textContent) || [''])[0]`);
    expect(result).to.match(new RegExp(`^replayed ${id} as r\\d+: 200$`));
    expect(rig.seen.filter((s) => s.url === '/orders?id=42').map((s) => [s.method, s.body, s.headers.authorization])).to.deep.equal([
      ['POST', '{"item":"tuna","count":2}', 'Bearer client-secret'],
      ['POST', '{"item":"tuna","count":2}', 'Bearer client-secret'],
    ]);
    await browser.waitFor('the replay in the list', `[...document.querySelectorAll('${row}')].some((tr) => tr.textContent.includes('(replay)'))`);
    await browser.waitFor('the replay opened', `document.getElementById('detail-meta').textContent.includes('replay of ${id}') && document.getElementById('response-body').textContent.includes('hello /orders?id=42')`);
    saveShot('inspector-replay.png', await browser.screenshot());
  });
});
