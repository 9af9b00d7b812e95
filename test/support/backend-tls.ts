import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
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
