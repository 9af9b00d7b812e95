import { expect } from 'chai';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeEdgeConfig, loadEdgeConfig } from '../../src/edge/config.js';
import { EdgeConfigError } from '../../src/edge/errors.js';

const LISTEN = { tunnel: { port: 7443 }, https: { port: 443 } };
const STORE = { url: ':memory:', baseDomain: 'tuna.test' };
const ACME = { directoryUrl: 'https://acme.test/directory', accountKeyFile: 'account.pem' };

describe('edge config file: the acme section', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'tuna-edge-config-acme-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('resolves accountKeyFile against the config file\'s folder and reads caFile into ca', async () => {
    mkdirSync(join(dir, 'conf'));
    writeFileSync(join(dir, 'test-ca.pem'), 'TEST CA PEM');
    writeFileSync(
      join(dir, 'conf', 'edge.yaml'),
      'listen: {tunnel: {port: 7443}, https: {port: 443}}\nstore: {url: ":memory:", baseDomain: tuna.test}\n' +
        'acme:\n  directoryUrl: https://acme.test/directory\n  accountKeyFile: keys/account.pem\n  contact: ["mailto:ops@tuna.test"]\n  caFile: ../test-ca.pem\n',
    );
    const config = await loadEdgeConfig(join(dir, 'conf', 'edge.yaml'));
    expect(config.acme).to.deep.equal({
      directoryUrl: 'https://acme.test/directory',
      accountKeyFile: join(dir, 'conf', 'keys', 'account.pem'),
      contact: ['mailto:ops@tuna.test'],
      caFile: '../test-ca.pem',
      ca: 'TEST CA PEM',
    });
  });

  it('names acme.caFile when the CA file cannot be read', async () => {
    writeFileSync(join(dir, 'edge.yaml'), JSON.stringify({ listen: LISTEN, store: STORE, acme: { ...ACME, caFile: 'missing.pem' } }));
    const err = await loadEdgeConfig(join(dir, 'edge.yaml')).then(() => undefined, (e: unknown) => e);
    expect(err).to.be.instanceOf(EdgeConfigError);
    expect((err as Error).message).to.match(/acme\.caFile: cannot read .*missing\.pem/);
  });

  const bad: { why: string; doc: Record<string, unknown>; field: RegExp }[] = [
    { why: 'a missing directoryUrl', doc: { listen: LISTEN, store: STORE, acme: { accountKeyFile: 'a.pem' } }, field: /acme\.directoryUrl: invalid value undefined/ },
    { why: 'a missing accountKeyFile', doc: { listen: LISTEN, store: STORE, acme: { directoryUrl: ACME.directoryUrl } }, field: /acme\.accountKeyFile: invalid value undefined/ },
    { why: 'contact given as one string', doc: { listen: LISTEN, store: STORE, acme: { ...ACME, contact: 'mailto:ops@tuna.test' } }, field: /acme\.contact: invalid value "mailto:ops@tuna\.test"/ },
    { why: 'a numeric caFile', doc: { listen: LISTEN, store: STORE, acme: { ...ACME, caFile: 7 } }, field: /acme\.caFile: invalid value 7/ },
    { why: 'an http:// directory (RFC 8555 §6.1)', doc: { listen: LISTEN, store: STORE, acme: { ...ACME, directoryUrl: 'http://acme.test/dir' } }, field: /acme\.directoryUrl: "http:\/\/acme\.test\/dir" is not an https:\/\/ URL/ },
    { why: 'a directory that is not a URL', doc: { listen: LISTEN, store: STORE, acme: { ...ACME, directoryUrl: 'letsencrypt' } }, field: /acme\.directoryUrl: "letsencrypt" is not an https:\/\/ URL/ },
    { why: 'an empty accountKeyFile', doc: { listen: LISTEN, store: STORE, acme: { ...ACME, accountKeyFile: ' ' } }, field: /acme\.accountKeyFile: must name a file/ },
    { why: 'a contact that is not a URL', doc: { listen: LISTEN, store: STORE, acme: { ...ACME, contact: ['mailto:a@tuna.test', 'ops at tuna'] } }, field: /acme\.contact\.1: "ops at tuna" is not a URL/ },
    { why: 'both ca and caFile', doc: { listen: LISTEN, store: STORE, acme: { ...ACME, ca: 'PEM', caFile: 'ca.pem' } }, field: /acme\.caFile: give `ca` or `caFile`, not both/ },
    { why: 'no store section', doc: { listen: LISTEN, acme: ACME }, field: /acme: ACME needs store mode/ },
    { why: 'no HTTPS listener', doc: { listen: { tunnel: { port: 7443 } }, store: STORE, acme: ACME }, field: /acme: ACME needs the HTTPS listener/ },
  ];
  for (const { why, doc, field } of bad) {
    it(`refuses ${why} with an EdgeConfigError naming the field`, () => {
      expect(() => decodeEdgeConfig(doc)).to.throw(EdgeConfigError, field);
    });
  }

  it('accepts a store-mode config without an acme section, as before', () => {
    expect(decodeEdgeConfig({ listen: LISTEN, store: STORE }).acme).to.equal(undefined);
  });
});
