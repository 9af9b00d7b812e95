import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** SelfSigned is a throwaway certificate and key (PEM) made for one test run. */
export interface SelfSigned {
  cert: string;
  key: string;
}

/** makeSelfSigned creates a P-256 self-signed certificate for `hostname` with `openssl`. */
export function makeSelfSigned(hostname: string): SelfSigned {
  const dir = mkdtempSync(join(tmpdir(), 'tuna-cert-'));
  try {
    execFileSync(
      'openssl',
      [
        'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
        '-subj', `/CN=${hostname}`, '-addext', `subjectAltName=DNS:${hostname}`,
        '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    return { cert: readFileSync(join(dir, 'cert.pem'), 'utf8'), key: readFileSync(join(dir, 'key.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** TestPki is a throwaway CA that issues certificates (openssl), for backend TLS tests. */
export interface TestPki {
  /** the CA certificate (PEM); its key stays in the PKI's temporary directory */
  ca: string;
  /** issue makes a key and a certificate signed by the CA, with the given subject CN and SANs */
  issue(cn: string, sans: { dns?: string[]; uris?: string[] }): SelfSigned;
  /** close removes the temporary directory (the CA key with it) */
  close(): void;
}

/** makeTestPki creates a P-256 CA with `openssl` in a temporary directory. */
export function makeTestPki(name = 'tuna test CA'): TestPki {
  const dir = mkdtempSync(join(tmpdir(), 'tuna-pki-'));
  const file = (f: string): string => join(dir, f);
  const run = (args: string[]): void => void execFileSync('openssl', args, { stdio: 'ignore' });
  run(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', `/CN=${name}`,
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign', '-keyout', file('ca.key'), '-out', file('ca.pem')]);
  let serial = 1;
  return {
    ca: readFileSync(file('ca.pem'), 'utf8'),
    issue(cn, sans) {
      const n = serial++;
      const alt = [...(sans.dns ?? []).map((d) => `DNS:${d}`), ...(sans.uris ?? []).map((u) => `URI:${u}`)].join(',');
      const ext = ['basicConstraints=CA:FALSE', 'extendedKeyUsage=serverAuth,clientAuth', ...(alt ? [`subjectAltName=${alt}`] : [])].join('\n');
      writeFileSync(file(`${n}.ext`), `${ext}\n`);
      run(['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-subj', `/CN=${cn}`, '-keyout', file(`${n}.key`), '-out', file(`${n}.csr`)]);
      run(['x509', '-req', '-in', file(`${n}.csr`), '-CA', file('ca.pem'), '-CAkey', file('ca.key'), '-set_serial', String(1000 + n), '-days', '1', '-extfile', file(`${n}.ext`), '-out', file(`${n}.pem`)]);
      return { cert: readFileSync(file(`${n}.pem`), 'utf8'), key: readFileSync(file(`${n}.key`), 'utf8') };
    },
    close() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
