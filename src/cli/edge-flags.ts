import { createHash, randomBytes } from 'node:crypto';
import { UsageError } from './errors.js';

/**
 * `tuna edge` without a YAML file (trying an edge needed a hand-written config
 * with a SHA-256 digest). The flags build the same document `--config` would load, so it is
 * decoded and checked by the same code (decodeEdgeConfig):
 *
 *     tuna edge --tunnel 127.0.0.1:7443 --http 127.0.0.1:8080 --store edge.db [--base-domain D]
 *     tuna edge --tunnel 127.0.0.1:7443 --http 127.0.0.1:8080 --bind app.localhost=<sha256>
 *
 * `--store` is store mode (accounts, keys and reservations in a database; `tuna edge init` makes
 * the first admin key); `--bind HOST=SHA256` (repeatable) is config mode with one host binding
 * per flag, its key minted by `tuna edge key`.
 */

/** EdgeFlagValues are the quick-start flags as parsed. */
export interface EdgeFlagValues {
  tunnel?: string;
  http?: string;
  store?: string;
  'base-domain'?: string;
  bind?: string[];
}

/** DEFAULT_BASE_DOMAIN: `<name>.localhost` resolves to loopback in browsers and curl. */
export const DEFAULT_BASE_DOMAIN = 'localhost';

/** edgeConfigFromFlags builds an edge config document from the quick-start flags. */
export function edgeConfigFromFlags(flags: EdgeFlagValues): Record<string, unknown> {
  if (flags.tunnel === undefined) throw new UsageError('tuna edge: --tunnel HOST:PORT is required without --config (the listener agents dial, and the control API)');
  if (flags.store !== undefined && (flags.bind ?? []).length > 0) {
    throw new UsageError('tuna edge: --store (bindings from reservations) and --bind (bindings from flags) exclude each other');
  }
  if (flags.store === undefined && flags['base-domain'] !== undefined) throw new UsageError('tuna edge: --base-domain applies to --store only');
  const listen: Record<string, unknown> = { tunnel: listenAddress('--tunnel', flags.tunnel) };
  if (flags.http !== undefined) listen.http = listenAddress('--http', flags.http);
  if (flags.store !== undefined) return { listen, store: { url: flags.store, baseDomain: flags['base-domain'] ?? DEFAULT_BASE_DOMAIN } };
  return { listen, bindings: (flags.bind ?? []).map(bindingFromFlag) };
}

/** listenAddress reads `HOST:PORT` (IPv6 in brackets; port 0 picks a free one). */
function listenAddress(flag: string, text: string): { host: string; port: number } {
  const m = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(text.trim());
  const port = Number(m?.[2]);
  if (!m || port > 65535) throw new UsageError(`tuna edge: ${flag} ${JSON.stringify(text)} is not HOST:PORT`);
  return { host: m[1]!.replace(/^\[|\]$/g, ''), port };
}

/** bindingFromFlag reads `--bind HOST=SHA256` into a host binding of the config file. */
function bindingFromFlag(text: string): Record<string, unknown> {
  const eq = text.indexOf('=');
  const host = text.slice(0, eq).trim().toLowerCase();
  const sha256 = text.slice(eq + 1).trim();
  if (eq < 0 || !/^(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(host)) {
    throw new UsageError(`tuna edge: --bind ${JSON.stringify(text)}: expected HOST=SHA256 (tuna edge key --host HOST prints it)`);
  }
  if (!/^[0-9a-f]{64}$/.test(sha256)) throw new UsageError(`tuna edge: --bind ${host}: the digest must be 64 lowercase hex digits (the key's SHA-256)`);
  return { id: `binding/host/${host}`, kind: 'host', hostnames: [host], keys: [{ sha256 }] };
}

/** ConfigModeKey is a new config-mode tunnel key and how to hand it to an edge. */
export interface ConfigModeKey {
  key: string;
  sha256: string;
}

/** mintConfigModeKey makes a key of 256 random bits (`tuna_ck_…`) and its SHA-256 digest. */
export function mintConfigModeKey(): ConfigModeKey {
  const key = `tuna_ck_${randomBytes(32).toString('base64url')}`;
  return { key, sha256: createHash('sha256').update(key).digest('hex') };
}
