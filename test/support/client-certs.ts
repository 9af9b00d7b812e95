import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** TestCa is a throwaway certificate authority (PEM certificate and key) made for one test run. */
export interface TestCa {
  cert: string;
  key: string;
}

/** TestClientCertificate is a client certificate signed by a TestCa, with its key (PEM). */
export interface TestClientCertificate {
  cert: string;
  key: string;
}

/** KeyOptions choose the key type of a test certificate (P-256 unless `rsa`). */
export interface KeyOptions {
  rsa?: boolean;
}

/** ClientOptions add to KeyOptions: `withoutKeyIdentifiers` leaves out the key identifier extensions, as Go's x509 does for a leaf whose parent template has none. */
export interface ClientOptions extends KeyOptions {
  withoutKeyIdentifiers?: boolean;
}

function newKey(options: KeyOptions): string[] {
  return options.rsa ? ['-newkey', 'rsa:2048', '-nodes'] : ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
}

/** makeTestCa creates a CA certificate (basicConstraints CA:TRUE, keyCertSign) with the openssl CLI. */
export function makeTestCa(commonName: string, options: KeyOptions = {}): TestCa {
  return inTempDir((dir) => {
    execFileSync(
      'openssl',
      ['req', '-x509', ...newKey(options), '-days', '2', '-subj', `/CN=${commonName}`,
        '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign',
        '-keyout', join(dir, 'ca.key'), '-out', join(dir, 'ca.pem')],
      { stdio: 'ignore' },
    );
    return { cert: readFileSync(join(dir, 'ca.pem'), 'utf8'), key: readFileSync(join(dir, 'ca.key'), 'utf8') };
  });
}

/** makeClientCertificate creates a client certificate (extendedKeyUsage clientAuth) for `subject`, signed by `ca`. */
export function makeClientCertificate(ca: TestCa, subject: string, options: ClientOptions = {}): TestClientCertificate {
  return inTempDir((dir) => {
    writeFileSync(join(dir, 'ca.pem'), ca.cert);
    writeFileSync(join(dir, 'ca.key'), ca.key);
    const noIds = options.withoutKeyIdentifiers ? 'authorityKeyIdentifier=none\nsubjectKeyIdentifier=none\n' : '';
    const usage = options.rsa ? 'digitalSignature,keyEncipherment' : 'digitalSignature';
    writeFileSync(join(dir, 'ext.cnf'), `basicConstraints=CA:FALSE\nkeyUsage=critical,${usage}\nextendedKeyUsage=clientAuth\n${noIds}`);
    execFileSync('openssl', ['req', '-new', ...newKey(options), '-subj', subject, '-keyout', join(dir, 'client.key'), '-out', join(dir, 'client.csr')], { stdio: 'ignore' });
    execFileSync(
      'openssl',
      ['x509', '-req', '-in', join(dir, 'client.csr'), '-CA', join(dir, 'ca.pem'), '-CAkey', join(dir, 'ca.key'), '-set_serial', '2',
        '-days', '2', '-extfile', join(dir, 'ext.cnf'), '-out', join(dir, 'client.pem')],
      { stdio: 'ignore' },
    );
    return { cert: readFileSync(join(dir, 'client.pem'), 'utf8'), key: readFileSync(join(dir, 'client.key'), 'utf8') };
  });
}

function inTempDir<T>(work: (dir: string) => T): T {
  const dir = mkdtempSync(join(tmpdir(), 'tuna-ca-'));
  try {
    return work(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
