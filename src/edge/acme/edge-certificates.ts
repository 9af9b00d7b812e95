/**
 * The edge's certificates beyond the config file: in store mode with an `acme` section, a
 * certificate manager (stored, static, ACME-issued; docs/acme.md), and the hook that orders
 * certificates for names reserved through this node's control API.
 */
import { X509Certificate } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EdgeConfigFile } from '../config.js';
import { EdgeConfigError } from '../errors.js';
import type { EdgeBinding } from '../tunnels/index.js';
import { createCertificateManager, loadOrCreateAccountKey } from './acme-setup.js';
import type { CertificateManager, CertificateStore, StaticCertificate } from './certificate-manager.js';
import type { CertificateProvider } from './certificate-provider.js';
import type { ReservationLookup } from './reserved-hostnames.js';

/**
 * CertificatesMode is what the certificates take of store mode (StoreMode, src/edge/store-mode):
 * the store that keeps them, and the directory whose host bindings name what to order.
 */
export interface CertificatesMode {
  readonly store: CertificateStore & ReservationLookup;
  readonly directory: {
    list(): readonly EdgeBinding[];
    /** reads the store at once (after this node's control API changed it) */
    refresh(): Promise<void>;
  };
}

/** staticCertificates returns the config file's certificates that carry both a cert and a key. */
export function staticCertificates(config: EdgeConfigFile): StaticCertificate[] {
  return (config.certificates ?? []).flatMap((c) => (c.cert !== undefined && c.key !== undefined ? [{ hostnames: c.hostnames, cert: c.cert, key: c.key }] : []));
}

/** staticCertificateExpiries is when each name of the config file's certificates expires (ms since the epoch); a certificate that does not parse is left out (its TLS context fails the start). */
export function staticCertificateExpiries(certificates: readonly StaticCertificate[]): { hostname: string; notAfter: number }[] {
  return certificates.flatMap((c) => {
    let notAfter: number;
    try {
      notAfter = new X509Certificate(c.cert).validToDate.getTime();
    } catch {
      return [];
    }
    return c.hostnames.map((hostname) => ({ hostname: hostname.toLowerCase(), notAfter }));
  });
}

/**
 * createConfiguredCertificates makes the store-mode edge its own certificate provider (stored,
 * static, ACME) when the config has an `acme` section and the caller brought no provider.
 */
export async function createConfiguredCertificates(
  config: EdgeConfigFile,
  mode: CertificatesMode,
  options: { certificateProvider?: CertificateProvider; log?: (line: string) => void },
): Promise<CertificateManager | undefined> {
  const acme = config.acme;
  if (acme === undefined || options.certificateProvider !== undefined) return undefined;
  // Read (or create) the account key first so a bad path fails the start with the field's name.
  await loadOrCreateAccountKey(acme.accountKeyFile).catch((err: Error) => {
    throw new EdgeConfigError(`invalid edge config: acme.accountKeyFile: cannot read or create ${acme.accountKeyFile}: ${(err as { code?: string }).code ?? err.name}`, { cause: err });
  });
  return createCertificateManager({
    store: mode.store,
    acme: {
      directoryUrl: acme.directoryUrl,
      accountKeyFile: acme.accountKeyFile,
      ...(acme.contact !== undefined ? { contact: acme.contact } : {}),
      ...(acme.ca !== undefined ? { caPem: acme.ca } : {}),
    },
    staticCertificates: staticCertificates(config),
    ...(options.log !== undefined ? { log: options.log } : {}),
  });
}

/**
 * certificatesOnReservation returns a hook for control API requests: after a reservation or a
 * custom-domain verification made through this node succeeds, every hostname the edge now serves
 * with edge TLS that it did not serve before gets `ensure`d, so the first visitor does not wait
 * for the order (docs/acme.md "When the edge asks"). Names a static certificate covers are left
 * alone (no CA rate limit spent). Only the node that took the request orders: the others see the
 * name by polling and would otherwise place duplicate orders.
 */
export function certificatesOnReservation(
  manager: CertificateManager,
  mode: CertificatesMode,
  statics: readonly StaticCertificate[],
  isClosed: () => boolean,
): (req: IncomingMessage, res: ServerResponse) => void {
  const covered = new Set(statics.flatMap((c) => c.hostnames.map((h) => h.toLowerCase())));
  const isCovered = (name: string): boolean => covered.has(name) || (name.indexOf('.') > 0 && covered.has(`*${name.slice(name.indexOf('.'))}`));
  const edgeHosts = (): Set<string> =>
    // A wildcard reservation is left out: TLS-ALPN-01 cannot prove a wildcard (RFC 8737 §3).
    new Set(mode.directory.list().flatMap((b) => (b.kind === 'host' && b.tls === 'edge' ? b.hostnames.map((h) => h.toLowerCase()).filter((h) => !h.startsWith('*.')) : [])));
  return (req, res) => {
    const path = (req.url ?? '').split('?')[0] ?? '';
    if (req.method !== 'POST' || !/^\/v1\/reservations(\/[^/]+\/verify)?$/.test(path)) return;
    // Taken before the store changes: a poll that lands before the answer must not hide the new name.
    const before = edgeHosts();
    res.once('finish', () => {
      if (res.statusCode >= 300) return;
      void mode.directory.refresh().then(() => {
        for (const name of edgeHosts()) {
          if (before.has(name) || isCovered(name) || isClosed()) continue;
          // A failed order is logged by the manager with the CA's problem; the first handshake asks again.
          manager.ensure(name).catch(() => undefined);
        }
      }, () => undefined);
    });
  };
}
