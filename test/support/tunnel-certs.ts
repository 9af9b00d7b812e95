import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { isIP } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** TestCertificate is a self-signed certificate and its key (PEM). */
export interface TestCertificate {
  cert: string;
  key: string;
}

/** selfSignedCertificate creates a throwaway P-256 certificate for the names (DNS names or IP addresses) with the openssl CLI. */
export function selfSignedCertificate(names: string[]): TestCertificate {
  const dir = mkdtempSync(join(tmpdir(), 'tuna-cert-'));
  try {
    const san = names.map((n) => (isIP(n) === 0 ? `DNS:${n}` : `IP:${n}`)).join(',');
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2',
        '-subj', `/CN=${names[0]}`, '-addext', `subjectAltName=${san}`, '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')],
      { stdio: 'ignore' },
    );
    return { cert: readFileSync(join(dir, 'cert.pem'), 'utf8'), key: readFileSync(join(dir, 'key.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
