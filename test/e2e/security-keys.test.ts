import { expect } from 'chai';
import { openSqliteStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';
import type { TunnelSession } from '../../src/tunnel/session.js';
import { http1 } from '../support/tunnel-harness.js';
import { BASE_DOMAIN, api, connectAgent, refusalStatus, reserveAndMint, secretOf, seedAccount, startStoreEdge } from '../support/edge-store-harness.js';
import type { Seeded, StoreEdge } from '../support/edge-store-harness.js';

/** closedWithin resolves to the milliseconds until the session closed, or rejects past the deadline. */
async function msUntilClosed(session: TunnelSession, since: number, deadlineMs: number): Promise<number> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the tunnel was still open ${deadlineMs} ms later`)), Math.max(0, since + deadlineMs - Date.now()));
  });
  try {
    await Promise.race([session.closed(), late]);
  } finally {
    clearTimeout(timer);
  }
  return Date.now() - since;
}

describe('security: keys and what they may do', () => {
  let store: Store;
  let running: StoreEdge;
  let seeded: Seeded;
  const sessions: TunnelSession[] = [];

  beforeEach(async () => {
    store = await openSqliteStore(':memory:');
    running = await startStoreEdge(store);
    seeded = await seedAccount(store);
  });

  afterEach(async () => {
    for (const s of sessions.splice(0)) s.destroy();
    await running.edge.close();
    await store.close();
  });

  const host = (name: string) => `${name}.${BASE_DOMAIN}`;

  it('refuses a tunnel opened with a reservations API key (403) and serves nothing through it', async () => {
    const t = await reserveAndMint(running.controlPort, seeded.reservationsToken, { kind: 'domain', hostname: host('a') }, { protocol: 'http' });
    expect(await refusalStatus(running.endpoint, t.bindingId, seeded.reservationsToken)).to.equal(403);
    expect(running.edge.registry.all()).to.have.length(0);
    expect((await http1(running.httpPort, host('a'), '/')).status).to.equal(503);
  });

  it('answers 401 to a tunnel key on every control API endpoint it tries', async () => {
    const t = await reserveAndMint(running.controlPort, seeded.reservationsToken, { kind: 'domain', hostname: host('a') }, { protocol: 'http' });
    const attempts: [string, string, unknown?][] = [
      ['GET', '/v1/account'],
      ['GET', '/v1/reservations'],
      ['POST', '/v1/reservations', { kind: 'domain', hostname: host('b') }],
      ['POST', '/v1/tunnel-keys', { reservationId: t.reservationId, protocol: 'http' }],
      ['DELETE', `/v1/tunnel-keys/${t.keyId}`],
      ['POST', '/v1/api-keys', { name: 'x', scopes: ['admin'] }],
    ];
    for (const [method, path, body] of attempts) {
      const answer = await api(running.controlPort, method, path, t.token, body);
      expect(answer.status, `${method} ${path}`).to.equal(401);
    }
    expect(await store.listReservations(seeded.accountId)).to.have.length(1);
    expect(await store.listTunnelKeys(seeded.accountId)).to.have.length(1);
  });

  it('refuses a key for host A on host B and on a TCP port of the same account, and refuses minting tcp for a host', async () => {
    const a = await reserveAndMint(running.controlPort, seeded.reservationsToken, { kind: 'domain', hostname: host('a') }, { protocol: 'http' });
    const b = await reserveAndMint(running.controlPort, seeded.reservationsToken, { kind: 'domain', hostname: host('b') }, { protocol: 'http' });
    const port = await reserveAndMint(running.controlPort, seeded.reservationsToken, { kind: 'tcp-port' }, { protocol: 'tcp' });
    expect(await refusalStatus(running.endpoint, b.bindingId, a.token)).to.equal(403);
    expect(await refusalStatus(running.endpoint, port.bindingId, a.token)).to.equal(403);
    expect(await refusalStatus(running.endpoint, a.bindingId, port.token)).to.equal(403);
    const tcpForHost = await api(running.controlPort, 'POST', '/v1/tunnel-keys', seeded.reservationsToken, { reservationId: a.reservationId, protocol: 'tcp' });
    expect(tcpForHost.status).to.equal(400);
    expect(tcpForHost.body).to.have.nested.property('error.field', 'protocol');
    // the right pairs still work, so the refusals above were about the pairing
    expect(await refusalStatus(running.endpoint, a.bindingId, a.token)).to.equal(101);
  });

  it('drops the live tunnels of a revoked key within 1 s and refuses the key afterwards', async () => {
    const t = await reserveAndMint(running.controlPort, seeded.reservationsToken, { kind: 'domain', hostname: host('a') }, { protocol: 'http', maxConnections: 2 });
    sessions.push(await connectAgent(running.endpoint, t.bindingId, t.token), await connectAgent(running.endpoint, t.bindingId, t.token));
    expect((await http1(running.httpPort, host('a'), '/')).status).to.equal(200);
    const since = Date.now();
    const revoked = await api(running.controlPort, 'DELETE', `/v1/tunnel-keys/${t.keyId}`, seeded.reservationsToken);
    expect(revoked.status).to.equal(200);
    await Promise.all(sessions.map((s) => msUntilClosed(s, since, 1000)));
    expect(await refusalStatus(running.endpoint, t.bindingId, t.token)).to.equal(403);
  });

  it('drops the live tunnels of a key revoked directly in the store (the path every node hears) within 1 s', async () => {
    const t = await reserveAndMint(running.controlPort, seeded.reservationsToken, { kind: 'domain', hostname: host('a') }, { protocol: 'http' });
    const session = await connectAgent(running.endpoint, t.bindingId, t.token);
    sessions.push(session);
    const since = Date.now();
    await store.revokeTunnelKey(seeded.accountId, t.keyId, 'test');
    await msUntilClosed(session, since, 1000);
  });

  it('drops the live tunnels of a key within 1 s of its expiry and refuses it afterwards', async () => {
    const t = await reserveAndMint(running.controlPort, seeded.reservationsToken, { kind: 'domain', hostname: host('a') }, { protocol: 'http', ttlSeconds: 2 });
    const key = await store.getTunnelKey(seeded.accountId, t.keyId);
    const session = await connectAgent(running.endpoint, t.bindingId, t.token);
    sessions.push(session);
    expect(session.state).to.equal('open');
    await msUntilClosed(session, key!.expiresAt, 1000);
    expect(Date.now()).to.be.at.least(key!.expiresAt);
    expect(await refusalStatus(running.endpoint, t.bindingId, t.token)).to.equal(403);
  });

  it('never writes a key or secret into a log line across a whole scenario', async () => {
    const minted: string[] = [seeded.adminToken, seeded.reservationsToken];
    const cli = await api(running.controlPort, 'POST', '/v1/api-keys', seeded.adminToken, { name: 'cli', scopes: ['tunnels'] });
    minted.push(cli.body['token'] as string);
    const t = await reserveAndMint(running.controlPort, seeded.reservationsToken, { kind: 'domain', hostname: host('a') }, { protocol: 'http' });
    minted.push(t.token);
    sessions.push(await connectAgent(running.endpoint, t.bindingId, t.token));
    await http1(running.httpPort, host('a'), '/');
    const rotated = await api(running.controlPort, 'POST', `/v1/tunnel-keys/${t.keyId}/rotate`, seeded.reservationsToken, { graceSeconds: 60 });
    minted.push(rotated.body['token'] as string);
    // failures log too: wrong keys on both doors, a key for the wrong binding, a revoked key
    const wrong = `${t.token.slice(0, -4)}AAAA`;
    minted.push(wrong);
    expect(await refusalStatus(running.endpoint, t.bindingId, wrong)).to.equal(403);
    expect((await api(running.controlPort, 'GET', '/v1/account', wrong)).status).to.equal(401);
    expect(await refusalStatus(running.endpoint, `binding/host/${host('zzz')}`, rotated.body['token'] as string)).to.equal(403);
    await api(running.controlPort, 'DELETE', `/v1/tunnel-keys/${t.keyId}`, seeded.reservationsToken);
    expect(await refusalStatus(running.endpoint, t.bindingId, rotated.body['token'] as string)).to.equal(403);
    await api(running.controlPort, 'DELETE', `/v1/api-keys/${(cli.body['apiKey'] as { id: string }).id}`, seeded.adminToken);

    expect(running.logs.length, 'the scenario logged something to check').to.be.greaterThan(3);
    const secrets = minted.flatMap((token) => [token, secretOf(token)]);
    for (const line of running.logs) for (const secret of secrets) expect(line).not.to.include(secret);
  });
});
