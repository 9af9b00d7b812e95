import { expect } from 'chai';
import { X509Certificate, generateKeyPairSync } from 'node:crypto';
import { CertificateManager, createSelfSignedCertificate, derToPem } from '../../src/edge/acme/index.js';
import type { CertificateIssuer, IssuedCertificate, Scheduler } from '../../src/edge/acme/index.js';
import { openSqliteStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';

const DAY = 86_400_000;
const START = Date.parse('2026-01-01T00:00:00Z');

/** FakeTime is the clock and the scheduler: timers fire only when the test runs them. */
class FakeTime implements Scheduler {
  now = START;
  timers: { fn: () => void; at: number; id: number }[] = [];
  #next = 0;
  setTimeout(fn: () => void, ms: number): unknown {
    const id = ++this.#next;
    this.timers.push({ fn, at: this.now + ms, id });
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.timers = this.timers.filter((t) => t.id !== handle);
  }
  /** fireNext advances the clock to the earliest timer and runs it. */
  fireNext(): void {
    const timer = [...this.timers].sort((a, b) => a.at - b.at)[0];
    if (timer === undefined) throw new Error('no timer armed');
    this.timers = this.timers.filter((t) => t !== timer);
    this.now = Math.max(this.now, timer.at);
    timer.fn();
  }
}

function selfSigned(hostnames: string[], notBefore: number, lifetimeMs: number): IssuedCertificate {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  // X.509 times have second precision: keep the fake clock's instants whole seconds.
  const der = createSelfSignedCertificate({ hostnames, key: privateKey, notBefore: new Date(notBefore), notAfter: new Date(notBefore + lifetimeMs) });
  return { chainPem: derToPem(der, 'CERTIFICATE'), keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), notAfter: notBefore + lifetimeMs };
}

/** CountingIssuer issues 90-day self-signed certificates at the fake clock's time, or fails on demand. */
class CountingIssuer implements CertificateIssuer {
  calls: string[] = [];
  failing = false;
  gate: Promise<void> = Promise.resolve();
  constructor(private readonly time: FakeTime) {}
  async issue(hostname: string): Promise<IssuedCertificate> {
    this.calls.push(hostname);
    await this.gate;
    if (this.failing) throw new Error('the CA said no');
    return selfSigned([hostname], this.time.now, 90 * DAY);
  }
}

async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
}

describe('acme certificate manager', () => {
  let store: Store;
  let time: FakeTime;
  let issuer: CountingIssuer;
  let manager: CertificateManager;
  const reserved = new Set(['app.example.test', 'web.example.test']);

  beforeEach(async () => {
    time = new FakeTime();
    store = await openSqliteStore(':memory:', { now: () => time.now });
    issuer = new CountingIssuer(time);
    manager = new CertificateManager({
      store,
      issuer,
      isIssuable: (name) => Promise.resolve(reserved.has(name)),
      now: () => time.now,
      scheduler: time,
    });
  });

  afterEach(async () => {
    manager.close();
    await store.close();
  });

  it('issues on demand for a reserved name and stores the certificate', async () => {
    expect(await manager.resolve('app.example.test')).to.not.equal(undefined);
    expect(issuer.calls).to.deep.equal(['app.example.test']);
    const stored = await store.getCertificate('app.example.test');
    expect(stored?.notAfter).to.equal(START + 90 * DAY);
    expect(await manager.resolve('APP.example.test')).to.not.equal(undefined);
    expect(issuer.calls).to.have.length(1);
  });

  it('lists the stored certificates it holds and their expiry for /metrics: those loaded at start and those issued since', async () => {
    const stored = selfSigned(['*.base.test'], START - DAY, 365 * DAY);
    await store.putCertificate({ hostname: '*.base.test', chainPem: stored.chainPem, keyPem: stored.keyPem, notAfter: stored.notAfter }, 'test');
    await manager.start();
    expect(manager.expiries()).to.deep.equal([{ hostname: '*.base.test', notAfter: START + 364 * DAY }]);
    await manager.resolve('app.example.test');
    expect(manager.expiries()).to.deep.equal([
      { hostname: '*.base.test', notAfter: START + 364 * DAY },
      { hostname: 'app.example.test', notAfter: START + 90 * DAY },
    ]);
  });

  it('never starts an order for a name that is not issuable', async () => {
    expect(await manager.resolve('stranger.example.test')).to.equal(undefined);
    expect(issuer.calls).to.deep.equal([]);
  });

  it('asks the policy about a refused name once per negativeCacheMs, and afresh on an explicit ensure', async () => {
    const asked: string[] = [];
    const late = new Set<string>();
    const policed = new CertificateManager({
      store,
      issuer,
      isIssuable: (name) => {
        asked.push(name);
        return Promise.resolve(late.has(name));
      },
      now: () => time.now,
      scheduler: time,
    });
    for (let i = 0; i < 5; i++) expect(await policed.resolve('late.example.test')).to.equal(undefined);
    expect(asked).to.deep.equal(['late.example.test']);
    late.add('late.example.test'); // reserved just now
    await policed.ensure('late.example.test');
    expect(asked).to.have.length(2);
    expect(issuer.calls).to.deep.equal(['late.example.test']);
    policed.close();
  });

  it('runs one order for concurrent requests of the same name', async () => {
    let open!: () => void;
    issuer.gate = new Promise((resolve) => (open = resolve));
    const all = Promise.all([manager.ensure('app.example.test'), manager.resolve('app.example.test'), manager.ensure('app.example.test')]);
    await settle();
    open();
    const contexts = await all;
    expect(issuer.calls).to.deep.equal(['app.example.test']);
    expect(contexts.every((c) => c !== undefined)).to.equal(true);
  });

  it('waits retryAfterFailureMs before ordering again for a name whose order failed', async () => {
    issuer.failing = true;
    expect(await manager.resolve('app.example.test')).to.equal(undefined);
    time.now += 60_000;
    expect(await manager.resolve('app.example.test')).to.equal(undefined);
    expect(issuer.calls).to.have.length(1);
    issuer.failing = false;
    time.now += 600_000;
    expect(await manager.resolve('app.example.test')).to.not.equal(undefined);
    expect(issuer.calls).to.have.length(2);
  });

  it('serves a stored wildcard and a static certificate without issuing', async () => {
    const wildcard = selfSigned(['*.base.test'], START - DAY, 365 * DAY);
    await store.putCertificate({ hostname: '*.base.test', chainPem: wildcard.chainPem, keyPem: wildcard.keyPem, notAfter: wildcard.notAfter }, 'test');
    const staticCert = selfSigned(['static.test'], START - DAY, 365 * DAY);
    const withStatic = new CertificateManager({
      store,
      staticCertificates: [{ hostnames: ['static.test'], cert: staticCert.chainPem, key: staticCert.keyPem }],
      now: () => time.now,
      scheduler: time,
    });
    expect(await withStatic.resolve('anything.base.test')).to.not.equal(undefined);
    expect(await withStatic.resolve('deeper.anything.base.test')).to.equal(undefined);
    expect(await withStatic.resolve('static.test')).to.not.equal(undefined);
    expect(await withStatic.resolve('other.test')).to.equal(undefined);
    withStatic.close();
  });

  it('serves a reserved subdomain from a covering static wildcard without ordering', async () => {
    const wildcard = selfSigned(['*.example.test'], START - DAY, 365 * DAY);
    const withWildcard = new CertificateManager({
      store,
      issuer,
      isIssuable: (name) => Promise.resolve(reserved.has(name)),
      staticCertificates: [{ hostnames: ['*.example.test'], cert: wildcard.chainPem, key: wildcard.keyPem }],
      now: () => time.now,
      scheduler: time,
    });
    expect(await withWildcard.resolve('app.example.test')).to.not.equal(undefined);
    expect(issuer.calls).to.deep.equal([]);
    withWildcard.close();
  });

  it('picks up a certificate another edge node stored after the negative cache expires', async () => {
    expect(await manager.resolve('other.example.test')).to.equal(undefined);
    const cert = selfSigned(['other.example.test'], START, 90 * DAY);
    await store.putCertificate({ hostname: 'other.example.test', chainPem: cert.chainPem, keyPem: cert.keyPem, notAfter: cert.notAfter }, 'test');
    expect(await manager.resolve('other.example.test')).to.equal(undefined);
    time.now += 30_000;
    expect(await manager.resolve('other.example.test')).to.not.equal(undefined);
    expect(issuer.calls).to.deep.equal([]);
  });

  it('renews a certificate once two thirds of its lifetime have passed, on the timer', async () => {
    await manager.ensure('app.example.test');
    const first = (await store.getCertificate('app.example.test'))!;
    const renewAt = START + 60 * DAY;
    // Bounded: the timer fires at least hourly, so 61 days take at most 61 * 24 firings.
    for (let i = 0; i < 61 * 24 && issuer.calls.length < 2; i++) {
      time.fireNext();
      await settle();
    }
    expect(issuer.calls).to.deep.equal(['app.example.test', 'app.example.test']);
    expect(time.now).to.be.at.least(renewAt).and.below(renewAt + 3_600_000);
    const second = (await store.getCertificate('app.example.test'))!;
    expect(second.notAfter).to.equal(time.now + 90 * DAY);
    expect(new X509Certificate(second.chainPem).fingerprint256).to.not.equal(new X509Certificate(first.chainPem).fingerprint256);
  });

  it('renews nothing before the renewal point and only issuable names after it', async () => {
    await manager.ensure('app.example.test');
    const foreign = selfSigned(['*.base.test'], START, 90 * DAY);
    await store.putCertificate({ hostname: '*.base.test', chainPem: foreign.chainPem, keyPem: foreign.keyPem, notAfter: foreign.notAfter }, 'test');
    time.now = START + 59 * DAY;
    expect(await manager.renewDue()).to.deep.equal([]);
    time.now = START + 61 * DAY;
    expect(await manager.renewDue()).to.deep.equal(['app.example.test']);
    expect(issuer.calls).to.deep.equal(['app.example.test', 'app.example.test']);
  });

  it('does not spin when a due renewal keeps failing: the next try waits retryAfterFailureMs', async () => {
    await manager.ensure('app.example.test');
    issuer.failing = true;
    time.now = START + 61 * DAY;
    time.fireNext();
    await settle();
    const armed = time.timers.map((t) => t.at - time.now);
    expect(armed).to.deep.equal([600_000]);
  });

  it('loads stored certificates at start and serves them from memory without the issuer', async () => {
    const cert = selfSigned(['web.example.test'], START, 90 * DAY);
    await store.putCertificate({ hostname: 'web.example.test', chainPem: cert.chainPem, keyPem: cert.keyPem, notAfter: cert.notAfter }, 'test');
    await manager.start();
    // Deleted from the store after start: only the loaded cache can still answer.
    await store.deleteCertificate('web.example.test', 'test');
    expect(await manager.resolve('web.example.test')).to.not.equal(undefined);
    expect(issuer.calls).to.deep.equal([]);
  });
});
