import { createPrivateKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { link, readFile, unlink, writeFile } from 'node:fs/promises';
import { AcmeClient } from './acme-client.js';
import { AcmeIssuer } from './acme-issuer.js';
import { CertificateManager } from './certificate-manager.js';
import type { CertificateStore, StaticCertificate } from './certificate-manager.js';
import { createHttpsTransport } from './http-transport.js';
import { isReservedHostname } from './reserved-hostnames.js';
import type { ReservationLookup } from './reserved-hostnames.js';
import { TlsAlpnChallenges } from './tls-alpn-challenges.js';

/** AcmeSettings are the edge's ACME options (the `acme` section of the edge config, see docs/acme.md). */
export interface AcmeSettings {
  /** the CA's directory, e.g. https://acme-v02.api.letsencrypt.org/directory */
  directoryUrl: string;
  /** PEM (PKCS#8) file of the ACME account key; created with mode 0600 when missing */
  accountKeyFile: string;
  /** account contact URLs, e.g. `mailto:ops@example.com` */
  contact?: string[];
  /** extra trusted roots (PEM) for the ACME server only, e.g. pebble's test CA */
  caPem?: string;
}

/** loadOrCreateAccountKey reads a P-256 account key, or creates one (exclusively, 0600) when the file is absent. */
export async function loadOrCreateAccountKey(path: string): Promise<KeyObject> {
  try {
    return createPrivateKey(await readFile(path, 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  // Written whole under a private name, then linked into place: link fails if the name exists, so
  // a concurrent first start never reads a half-written file, and both end up with one account.
  const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
  await writeFile(temporary, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600, flag: 'wx' });
  try {
    await link(temporary, path);
    return privateKey;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return createPrivateKey(await readFile(path, 'utf8'));
    throw err;
  } finally {
    await unlink(temporary).catch(() => {});
  }
}

/** CertificateSetupOptions are what createCertificateManager needs. */
export interface CertificateSetupOptions {
  store: CertificateStore & ReservationLookup;
  /** without it the edge serves stored and static certificates only */
  acme?: AcmeSettings;
  staticCertificates?: StaticCertificate[];
  log?: (line: string) => void;
}

/** createCertificateManager wires and starts the edge's certificate provider: store, static, and ACME when configured. */
export async function createCertificateManager(options: CertificateSetupOptions): Promise<CertificateManager> {
  const base = {
    store: options.store,
    ...(options.staticCertificates !== undefined ? { staticCertificates: options.staticCertificates } : {}),
    ...(options.log !== undefined ? { log: options.log } : {}),
  };
  let manager: CertificateManager;
  if (options.acme === undefined) {
    manager = new CertificateManager(base);
  } else {
    const { acme } = options;
    const client = new AcmeClient({
      directoryUrl: acme.directoryUrl,
      accountKey: await loadOrCreateAccountKey(acme.accountKeyFile),
      transport: createHttpsTransport(acme.caPem !== undefined ? { ca: acme.caPem } : {}),
      ...(acme.contact !== undefined ? { contact: acme.contact } : {}),
    });
    const challenges = new TlsAlpnChallenges();
    manager = new CertificateManager({ ...base, issuer: new AcmeIssuer(client, challenges), challenges, isIssuable: isReservedHostname(options.store) });
  }
  await manager.start();
  return manager;
}
