/**
 * Stored rows are decoded with io-ts codecs: a corrupt row (a column edited by hand, JSON that is
 * not JSON) gives StoreCorruptRowError naming the column, never a TypeError later.
 */
import { expect } from 'chai';
import { SqlStore, StoreCorruptRowError } from '../../src/edge/store/index.js';
import { toApiKey, toAuditEvent, toReservation, toTunnelKey } from '../../src/edge/store/rows.js';
import { SqliteDriver } from '../../src/edge/store/sqlite-driver.js';
import { FakeClock } from '../support/postgres.js';

const reservation = {
  id: 'r1',
  account_id: 'a1',
  kind: 'domain',
  value: 'shop.tuna.example',
  port: null,
  name: null,
  labels: '{"cluster":"c1"}',
  domain_type: 'subdomain',
  verification_token: null,
  verified: 1,
  created_at: 5,
  updated_at: 6,
  released_at: null,
};

function corruption(fn: () => unknown): StoreCorruptRowError {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(StoreCorruptRowError);
    return err as StoreCorruptRowError;
  }
  throw new Error('expected StoreCorruptRowError');
}

describe('store rows', () => {
  it('maps a reservations row, with BIGINTs as PostgreSQL text or SQLite numbers', () => {
    expect(toReservation({ ...reservation, created_at: '5', updated_at: 6 })).to.deep.equal({
      id: 'r1',
      accountId: 'a1',
      kind: 'domain',
      value: 'shop.tuna.example',
      name: null,
      labels: { cluster: 'c1' },
      domainType: 'subdomain',
      verificationToken: null,
      verified: true,
      createdAt: 5,
      updatedAt: 6,
    });
  });

  const cases: [string, () => unknown, string][] = [
    ['labels that are not JSON', () => toReservation({ ...reservation, labels: '{cluster' }), 'corrupt reservations row: labels: expected JSON text'],
    ['a label value that is not a string', () => toReservation({ ...reservation, labels: '{"cluster":7}' }), 'corrupt reservations row: labels.cluster: expected a string'],
    ['an unknown reservation kind', () => toReservation({ ...reservation, kind: 'ip' }), 'corrupt reservations row: kind: expected one of domain, tcp-port, address'],
    ['a missing id', () => toReservation({ ...reservation, id: null }), 'corrupt reservations row: id: required'],
    ['a time that is not an integer', () => toReservation({ ...reservation, created_at: 'yesterday' }), 'corrupt reservations row: created_at: expected an integer'],
    [
      'an unknown api key scope',
      () => toApiKey({ id: 'k', account_id: 'a', name: 'n', scopes: '["reservations","root"]', created_at: 1, revoked_at: null }),
      'corrupt api_keys row: scopes[1]: expected one of reservations, tunnels, admin',
    ],
    [
      'a tunnel key protocol the edge does not know',
      () => toTunnelKey({ id: 'k', account_id: 'a', reservation_id: 'r', protocol: 'quic', max_connections: 2, expires_at: 9, labels: '{}', created_at: 1 }),
      'corrupt tunnel_keys row: protocol: expected one of http, https, tls, tcp, udp',
    ],
    [
      'an audit detail that is a list',
      () => toAuditEvent({ seq: 1, at: 1, actor: 'x', action: 'y', account_id: null, target_kind: 'k', target_id: 'i', detail: '[1]' }),
      'corrupt audit_log row: detail: expected an object',
    ],
  ];
  for (const [what, fn, message] of cases) {
    it(`names the column of ${what}`, () => {
      expect(corruption(fn).message).to.equal(message);
    });
  }

  it('refuses a corrupt row read back from SQLite with the store error, not a SyntaxError', async () => {
    const driver = new SqliteDriver(':memory:');
    const store = await SqlStore.open(driver, new FakeClock());
    try {
      const account = await store.createAccount({ name: 'alice' }, 'test');
      await store.createReservation({ accountId: account.id, spec: { kind: 'domain', hostname: 'shop.example.com', domainType: 'custom' } }, 'test');
      await driver.run("UPDATE reservations SET labels = 'not json'");
      const err = await store.listReservations(account.id).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(StoreCorruptRowError);
      expect((err as StoreCorruptRowError).code).to.equal('TUNA_STORE_CORRUPT_ROW');
      expect((err as Error).message).to.equal('corrupt reservations row: labels: expected JSON text');
    } finally {
      await store.close();
    }
  });
});
