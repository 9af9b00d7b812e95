// edge-store-unreachable.test.ts — a store-mode edge on PostgreSQL whose database goes away: the
// control API answers 503 TUNA_CONTROL_STORE_UNAVAILABLE (nothing was done, retry later), not 500,
// and the same calls succeed once the database is back.
import { expect } from 'chai';
import { connect, createServer } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';
import { openPostgresStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';
import { api, seedAccount, startStoreEdge } from '../support/edge-store-harness.js';
import type { StoreEdge } from '../support/edge-store-harness.js';
import { freshPostgresSchema } from '../support/postgres.js';

/** Link is a TCP path to the database that the test can cut (every connection ended, new ones refused) and restore on the same port. */
class Link {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async open(): Promise<void> {
    const server = createServer((client) => {
      const upstream = connect(this.target);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('error', () => undefined);
        s.on('close', () => (this.sockets.delete(s), client.destroy(), upstream.destroy()));
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', () => resolve()));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  }
}

describe('store-mode edge: its PostgreSQL unreachable', function () {
  this.timeout(60_000);
  let link: Link;
  let store: Store;
  let edge: StoreEdge;
  let token: string;

  before(async () => {
    const target = await freshPostgresSchema();
    const url = new URL(target.connectionString);
    link = new Link({ host: url.hostname, port: Number(url.port) });
    await link.open();
    url.port = String(link.port);
    store = await openPostgresStore({ connectionString: url.toString(), schema: target.schema });
    edge = await startStoreEdge(store);
    token = (await seedAccount(store)).reservationsToken;
  });

  after(async () => {
    await edge?.edge.close();
    await link?.cut();
    await store?.close();
  });

  it('answers 503 TUNA_CONTROL_STORE_UNAVAILABLE while the database is unreachable, and serves the same calls again once it is back', async () => {
    const before = await api(edge.controlPort, 'POST', '/v1/reservations', token, { kind: 'domain', hostname: 'before.tuna.test' });
    expect(before.status, JSON.stringify(before.body)).to.equal(201);

    await link.cut();
    for (const [method, path, body] of [['POST', '/v1/reservations', { kind: 'domain', hostname: 'during.tuna.test' }], ['GET', '/v1/reservations', undefined]] as const) {
      const answer = await api(edge.controlPort, method, path, token, body);
      expect(answer.status, `${method} ${path}: ${JSON.stringify(answer.body)}`).to.equal(503);
      expect(answer.body['error']).to.deep.include({ code: 'TUNA_CONTROL_STORE_UNAVAILABLE' });
    }

    await link.open();
    const after = await api(edge.controlPort, 'POST', '/v1/reservations', token, { kind: 'domain', hostname: 'after.tuna.test' });
    expect(after.status, JSON.stringify(after.body)).to.equal(201);
    const listed = await api(edge.controlPort, 'GET', '/v1/reservations', token);
    expect((listed.body['reservations'] as { value: string }[]).map((r) => r.value).sort()).to.deep.equal(['after.tuna.test', 'before.tuna.test']);
  });
});
