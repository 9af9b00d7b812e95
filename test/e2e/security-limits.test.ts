import { expect } from 'chai';
import { once } from 'node:events';
import { Agent, request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { openSqliteStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';
import { HEADER_BINDING, TUNNEL_PATH, TUNNEL_UPGRADE_TOKEN } from '../../src/wire/protocol.js';
import { BASE_DOMAIN, api, refusalStatus, reserveAndMint, seedAccount, startStoreEdge } from '../support/edge-store-harness.js';
import type { Seeded, StoreEdge } from '../support/edge-store-harness.js';

/** handshake sends one raw upgrade request and returns the status of the answer. */
async function handshake(port: number, bindingId: string, key: string): Promise<number> {
  const socket = connect({ host: '127.0.0.1', port });
  socket.on('error', () => undefined);
  await once(socket, 'connect');
  socket.write(
    `GET ${TUNNEL_PATH} HTTP/1.1\r\nHost: edge\r\nConnection: Upgrade\r\nUpgrade: ${TUNNEL_UPGRADE_TOKEN}\r\n` +
      `Authorization: Bearer ${key}\r\n${HEADER_BINDING}: ${encodeURIComponent(bindingId)}\r\n\r\n`,
  );
  let head = '';
  for await (const chunk of socket) {
    head += (chunk as Buffer).toString('latin1');
    if (head.includes('\r\n')) break;
  }
  socket.destroy();
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
}

// Strings that break out of a quoted SQL literal, end a statement, comment the rest out, or
// smuggle a second statement; each one must be stored as text or refused, never run.
const INJECTIONS = [
  `x'); DROP TABLE reservations; --`,
  `' OR '1'='1`,
  `"; DELETE FROM tunnel_keys; --`,
  `1; UPDATE api_keys SET revoked_at = 1; --`,
  `\\'; SELECT pg_sleep(5); --`,
];

describe('security: brute force, injection and body limits', () => {
  let store: Store;
  let running: StoreEdge;
  let seeded: Seeded;

  beforeEach(async () => {
    store = await openSqliteStore(':memory:');
    running = await startStoreEdge(store);
    seeded = await seedAccount(store);
  });

  afterEach(async () => {
    await running.edge.close();
    await store.close();
  });

  it('answers 429 on the control API after a run of 1,000 wrong keys, then even to the right key', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const statuses: number[] = [];
    try {
      for (let i = 0; i < 1000; i++) {
        const req = httpRequest({ host: '127.0.0.1', port: running.controlPort, path: '/v1/account', agent, headers: { authorization: `Bearer tuna_ak_${i.toString(16).padStart(16, '0')}_wrong` } });
        req.end();
        const [res] = (await once(req, 'response')) as [{ statusCode: number; resume(): void; once(e: string, f: () => void): void }];
        res.resume();
        statuses.push(res.statusCode);
      }
    } finally {
      agent.destroy();
    }
    expect(statuses.slice(0, 10)).to.deep.equal(new Array(10).fill(401));
    expect(statuses.filter((s) => s === 429).length).to.be.greaterThan(900);
    expect(statuses.at(-1)).to.equal(429);
    expect((await api(running.controlPort, 'GET', '/v1/account', seeded.reservationsToken)).status).to.equal(429);
  });

  it('answers 429 on the tunnel acceptor after a run of 1,000 wrong keys, then even to the right key', async () => {
    const t = await reserveAndMint(running.controlPort, seeded.reservationsToken, { kind: 'domain', hostname: `a.${BASE_DOMAIN}` }, { protocol: 'http' });
    const statuses: number[] = [];
    for (let i = 0; i < 1000; i++) statuses.push(await handshake(running.controlPort, t.bindingId, `tuna_tk_${i.toString(16).padStart(16, '0')}_wrong`));
    expect(statuses.slice(0, 10)).to.deep.equal(new Array(10).fill(403));
    expect(statuses.filter((s) => s === 429).length).to.be.greaterThan(800);
    expect(statuses.at(-1)).to.equal(429);
    expect(await refusalStatus(running.endpoint, t.bindingId, t.token)).to.equal(429);
  });

  it('stores or refuses SQL injection strings in every control API field and tunnel header, never runs them', async () => {
    for (const evil of INJECTIONS) {
      const account = await api(running.controlPort, 'POST', '/v1/accounts', seeded.adminToken, { name: `acct ${evil}` });
      expect(account.status, evil).to.equal(201);
      expect(account.body).to.have.nested.property('account.name', `acct ${evil}`);
      const key = await api(running.controlPort, 'POST', '/v1/api-keys', seeded.adminToken, { name: evil, scopes: ['reservations'] });
      expect(key.status).to.equal(201);
      expect(key.body).to.have.nested.property('apiKey.name', evil);
      const badHost = await api(running.controlPort, 'POST', '/v1/reservations', seeded.reservationsToken, { kind: 'domain', hostname: evil });
      expect(badHost.status).to.equal(400);
      const badAddress = await api(running.controlPort, 'POST', '/v1/reservations', seeded.reservationsToken, { kind: 'address', address: evil });
      expect(badAddress.status).to.equal(400);
      const named = await api(running.controlPort, 'POST', '/v1/reservations', seeded.reservationsToken, { kind: 'tcp-port', name: evil, labels: { team: evil } });
      expect(named.status, JSON.stringify(named.body)).to.be.oneOf([201, 400]);
      for (const path of [`/v1/reservations/${encodeURIComponent(evil)}`, `/v1/tunnel-keys/${encodeURIComponent(evil)}`]) {
        expect((await api(running.controlPort, 'GET', path, seeded.reservationsToken)).status).to.be.oneOf([400, 404]);
        expect((await api(running.controlPort, 'DELETE', path, seeded.reservationsToken)).status).to.be.oneOf([400, 404]);
      }
      const listed = await api(running.controlPort, 'GET', `/v1/reservations?selector=${encodeURIComponent(`team=${evil}`)}`, seeded.reservationsToken);
      expect(listed.status).to.be.oneOf([200, 400]);
      expect(await handshake(running.controlPort, evil, `tuna_tk_${evil}`)).to.be.oneOf([400, 401, 403]);
    }
    // every table is still there and holds exactly what was stored
    const accounts = await store.listAccounts();
    expect(accounts.map((a) => a.name)).to.include.members(INJECTIONS.map((e) => `acct ${e}`));
    const keys = await store.listApiKeys(seeded.accountId);
    expect(keys.map((k) => k.name)).to.include.members([...INJECTIONS, 'admin', 'operator']);
    expect(keys.every((k) => k.revokedAt === null)).to.equal(true);
    const reservations = await store.listReservations(seeded.accountId);
    for (const r of reservations) expect(r.name === null || INJECTIONS.includes(r.name)).to.equal(true);
    const t = await reserveAndMint(running.controlPort, seeded.reservationsToken, { kind: 'domain', hostname: `after.${BASE_DOMAIN}` }, { protocol: 'http' });
    expect(await refusalStatus(running.endpoint, t.bindingId, t.token)).to.equal(101);
  });

  it('answers 413 to a 10 MiB control API body and stores nothing from it', async () => {
    const body = Buffer.alloc(10 << 20, 0x20);
    const req = httpRequest({
      host: '127.0.0.1',
      port: running.controlPort,
      method: 'POST',
      path: '/v1/reservations',
      agent: false,
      headers: { 'authorization': `Bearer ${seeded.reservationsToken}`, 'content-type': 'application/json', 'content-length': String(body.length) },
    });
    req.on('error', () => undefined);
    req.end(body);
    const [res] = (await once(req, 'response')) as [{ statusCode: number; resume(): void }];
    res.resume();
    expect(res.statusCode).to.equal(413);
    expect(await store.listReservations(seeded.accountId)).to.have.length(0);
  });
});
