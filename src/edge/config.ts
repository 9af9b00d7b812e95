import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { isLeft } from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { parse as parseYaml } from 'yaml';
import { EdgeConfigError } from './errors.js';

/**
 * The edge configuration file (YAML or JSON), decoded with io-ts at the boundary. Keys appear only
 * as SHA-256 digests (hex), never in clear. See docs/edge-relay.md for an annotated example.
 */

const Endpoint = t.intersection([t.type({ port: t.number }), t.partial({ host: t.string })]);

const PemSource = t.partial({ cert: t.string, key: t.string, certFile: t.string, keyFile: t.string });

const TunnelListener = t.intersection([Endpoint, t.partial({ tls: PemSource })]);

const Certificate = t.intersection([t.type({ hostnames: t.array(t.string) }), PemSource]);

const KeyEntry = t.intersection([
  t.type({ sha256: t.string }),
  t.partial({ id: t.string, maxConnections: t.number, expires: t.string }),
]);

const PortSpec = t.type({ port: t.number, protocol: t.keyof({ http: null, https: null, tls: null, tcp: null, udp: null }) });

const portNumber = t.refinement(t.number, (n) => Number.isInteger(n) && n >= 1 && n <= 65535, 'port number 1-65535');

/** an inclusive port range, first <= last (`store.addressPortRange`) */
const PortRange = t.refinement(t.type({ first: portNumber, last: portNumber }), (r) => r.first <= r.last, 'port range with first <= last');

const BindingEntry = t.intersection([
  t.type({ id: t.string, kind: t.keyof({ host: null, 'tcp-port': null, address: null }) }),
  t.partial({
    hostnames: t.array(t.string),
    port: t.number,
    address: t.string,
    ports: t.array(PortSpec),
    tls: t.keyof({ edge: null, 'terminate-in-cluster': null, passthrough: null }),
    /** tcp-port: open the port for TCP, UDP or both (docs/protocol.md §4.6); default [tcp] */
    transports: t.array(t.keyof({ tcp: null, udp: null })),
    keys: t.array(KeyEntry),
  }),
]);

// Public connection hygiene (docs/edge-relay.md "Public connection hygiene"): deadlines and limits of the public
// listeners, and the per-connection HTTP/2 abuse budgets. Defaults in docs/edge-relay.md.
const PublicLimits = t.partial({
  firstByteTimeoutMs: t.number,
  headersTimeoutMs: t.number,
  idleTimeoutMs: t.number,
  maxConnections: t.number,
  maxConnectionsPerAddress: t.number,
  tcpFirstByteTimeoutMs: t.number,
  tcpIdleTimeoutMs: t.number,
  maxInFlightPerClient: t.number,
  http2WindowMs: t.number,
  http2MaxResets: t.number,
  http2MaxPings: t.number,
  http2MaxSettings: t.number,
});

// The tunnel listener's deadlines and connection limits; defaults in docs/edge-relay.md "The tunnel listener".
const TunnelListenerLimits = t.partial({
  firstByteTimeoutMs: t.number,
  headersTimeoutMs: t.number,
  idleTimeoutMs: t.number,
  maxConnections: t.number,
  maxConnectionsPerAddress: t.number,
});

/** EdgePublicLimits is `limits.public`: deadlines, connection limits and HTTP/2 abuse budgets of the public listeners. */
export type EdgePublicLimits = t.TypeOf<typeof PublicLimits>;

// UDP flows (docs/protocol.md §4.6); defaults DEFAULT_UDP_LIMITS in src/edge/fronts/udp-front.ts.
const UdpLimits = t.partial({ idleTimeoutMs: t.number, maxFlowsPerBinding: t.number, maxFlowsPerAddress: t.number, maxQueuedDatagrams: t.number });

const Limits = t.partial({
  public: PublicLimits,
  udp: UdpLimits,
  tunnelListener: TunnelListenerLimits,
  maxRequestBodyBytes: t.number,
  maxHeaderBytes: t.number,
  tunnelWaitMs: t.number,
  pingIntervalMs: t.number,
  streamWindowBytes: t.number,
  connectionWindowBytes: t.number,
  maxConcurrentStreams: t.number,
});

// Store mode (docs/edge.md): accounts, keys and reservations live in a database and the control
// API is served at /v1 on the tunnel listener; bindings come from reservations, not from `bindings`.
const StoreSection = t.intersection([
  t.type({ url: t.string, baseDomain: t.string }),
  t.partial({
    portPool: t.type({ first: t.number, last: t.number }),
    addressPool: t.string,
    addressPorts: t.array(PortSpec),
    /** the ports an address reservation may ask for (`ports`); absent: only those of `addressPorts` */
    addressPortRange: PortRange,
    pollMs: t.number,
    dnsServers: t.array(t.string),
    /** PostgreSQL only: keep the tables in this schema (several edges on one server) */
    schema: t.string,
    /** per-account limits an admin may override per account (docs/edge-store.md "Quotas and unverified domains") */
    quotas: t.partial({ reservations: t.number, tunnelKeys: t.number, concurrentTunnels: t.number }),
    /** days an unverified custom domain is held before the edge releases it */
    unverifiedDomainDays: t.number,
  }),
]);

// ACME (docs/acme.md): certificates for reserved hostnames, issued through TLS-ALPN-01 on the HTTPS
// listener. `caFile`/`ca` trust an extra root for the ACME server only (a test CA such as pebble's).
const AcmeSection = t.intersection([
  t.type({ directoryUrl: t.string, accountKeyFile: t.string }),
  t.partial({ contact: t.array(t.string), caFile: t.string, ca: t.string }),
]);

/** EdgeConfigCodec is the io-ts codec of the edge configuration file. */
export const EdgeConfigCodec = t.intersection([
  t.type({
    listen: t.intersection([
      t.type({ tunnel: TunnelListener }),
      t.partial({ http: Endpoint, https: Endpoint, metrics: Endpoint, addressPool: t.string }),
    ]),
  }),
  t.partial({
    certificates: t.array(Certificate),
    bindings: t.array(BindingEntry),
    limits: Limits,
    store: StoreSection,
    acme: AcmeSection,
    workers: t.number,
    /** public HTTP/1.1: one tunnel stream per connection (`spliced`, to agents that support it) or per request (docs/edge.md) */
    http1Forwarding: t.keyof({ spliced: null, 'per-request': null }),
  }),
]);

/** EdgeStoreConfig is the `store` section: where the state lives and what the control API hands out. */
export type EdgeStoreConfig = t.TypeOf<typeof StoreSection>;

/** EdgeAcmeConfig is the `acme` section: where certificates for reserved hostnames come from. */
export type EdgeAcmeConfig = t.TypeOf<typeof AcmeSection>;

/** EdgeConfigFile is the decoded file, before PEM files are read. */
export type EdgeConfigFile = t.TypeOf<typeof EdgeConfigCodec>;

/** decodeEdgeConfig validates a parsed document, throwing EdgeConfigError with every problem's path. */
export function decodeEdgeConfig(doc: unknown): EdgeConfigFile {
  const result = EdgeConfigCodec.decode(doc);
  if (isLeft(result)) {
    const problems = result.left.map((e) => {
      // intersection members add index keys ('0', '1') to the context; they are not part of the path.
      const path = e.context
        .filter((c, i) => c.key !== '' && (e.context[i - 1]?.type as { _tag?: string } | undefined)?._tag !== 'IntersectionType')
        .map((c) => c.key);
      return `${path.join('.') || '(root)'}: invalid value ${JSON.stringify(e.value)}`;
    });
    throw new EdgeConfigError(`invalid edge config: ${[...new Set(problems)].slice(0, 5).join('; ')}`);
  }
  for (const binding of result.right.bindings ?? []) {
    for (const key of binding.keys ?? []) {
      if (!/^[0-9a-f]{64}$/.test(key.sha256)) {
        throw new EdgeConfigError(`invalid edge config: binding ${binding.id}: sha256 must be 64 lowercase hex digits`);
      }
    }
  }
  if (result.right.store !== undefined && (result.right.bindings ?? []).length > 0) {
    throw new EdgeConfigError('invalid edge config: store mode takes its bindings from reservations; remove `bindings`');
  }
  if (result.right.acme !== undefined) checkAcme(result.right);
  checkPortPool(result.right);
  checkStoreLimits(result.right.store);
  checkWorkers(result.right);
  checkPublicLimits(result.right.limits?.public, 'limits.public');
  checkPublicLimits(result.right.limits?.tunnelListener, 'limits.tunnelListener');
  checkPublicLimits(result.right.limits?.udp, 'limits.udp');
  const pool = result.right.listen.addressPool;
  if (pool !== undefined) {
    const contains = parseCidr(pool);
    for (const binding of result.right.bindings ?? []) {
      if (binding.address !== undefined && !contains(binding.address)) {
        throw new EdgeConfigError(`invalid edge config: binding ${binding.id}: address ${binding.address} is outside ${pool}`);
      }
    }
  }
  return result.right;
}

// The codec checks shapes; these are the rules it cannot say. Each message names the field.
function checkAcme(config: EdgeConfigFile): void {
  const acme = config.acme!;
  const fail = (field: string, why: string): never => {
    throw new EdgeConfigError(`invalid edge config: ${field}: ${why}`);
  };
  // Issued certificates and the issuance policy (held, verified reservations) live in the store.
  if (config.store === undefined) fail('acme', 'ACME needs store mode (a `store` section)');
  // TLS-ALPN-01 (RFC 8737) is answered on the shared HTTPS listener.
  if (config.listen.https === undefined) fail('acme', 'ACME needs the HTTPS listener (`listen.https`)');
  // RFC 8555 §6.1: ACME runs over HTTPS only.
  if (parseUrl(acme.directoryUrl)?.protocol !== 'https:') fail('acme.directoryUrl', `${JSON.stringify(acme.directoryUrl)} is not an https:// URL`);
  if (acme.accountKeyFile.trim() === '') fail('acme.accountKeyFile', 'must name a file');
  // RFC 8555 §7.3: contacts are URLs (Let's Encrypt takes `mailto:` only).
  for (const [i, contact] of (acme.contact ?? []).entries()) {
    if (parseUrl(contact) === undefined) fail(`acme.contact.${i}`, `${JSON.stringify(contact)} is not a URL such as mailto:ops@example.com`);
  }
  if (acme.ca !== undefined && acme.caFile !== undefined) fail('acme.caFile', 'give `ca` or `caFile`, not both');
}

// A pool that holds one of the edge's own ports would hand it to a tenant.
function checkPortPool(config: EdgeConfigFile): void {
  const pool = config.store?.portPool;
  if (pool === undefined) return;
  const { tunnel, http, https, metrics } = config.listen;
  const endpoints = [['listen.tunnel', tunnel], ['listen.http', http], ['listen.https', https], ['listen.metrics', metrics]] as const;
  for (const [field, endpoint] of endpoints) {
    const port = endpoint?.port;
    if (port !== undefined && port !== 0 && port >= pool.first && port <= pool.last) {
      throw new EdgeConfigError(`invalid edge config: store.portPool: ${pool.first}-${pool.last} holds ${field}.port ${port}, the edge's own listener`);
    }
  }
}

/** MAX_CONFIG_WORKERS bounds `workers` (the edge's worker processes, `tuna edge --workers`). */
export const MAX_CONFIG_WORKERS = 256;

// `workers`: processes sharing the listeners (src/cli/edge-workers.ts). ACME issues and renews in
// one process only, so an ACME edge runs one (docs/edge.md, "Workers").
function checkWorkers(config: EdgeConfigFile): void {
  const { workers } = config;
  if (workers === undefined) return;
  if (!Number.isInteger(workers) || workers < 1 || workers > MAX_CONFIG_WORKERS) {
    throw new EdgeConfigError(`invalid edge config: workers: must be a whole number from 1 to ${MAX_CONFIG_WORKERS}, got ${JSON.stringify(workers)}`);
  }
  if (workers > 1 && config.acme !== undefined) throw new EdgeConfigError('invalid edge config: workers: an edge with an `acme` section runs one worker (ACME issues in one process)');
}

// Quotas and the expiry are whole numbers (a quota of 0 means "none allowed"; an expiry of 0 days would release at once).
function checkStoreLimits(store: EdgeStoreConfig | undefined): void {
  const limits: [string, number | undefined, number][] = [
    ['store.quotas.reservations', store?.quotas?.reservations, 0],
    ['store.quotas.tunnelKeys', store?.quotas?.tunnelKeys, 0],
    ['store.quotas.concurrentTunnels', store?.quotas?.concurrentTunnels, 0],
    ['store.unverifiedDomainDays', store?.unverifiedDomainDays, 1],
  ];
  for (const [field, value, least] of limits) {
    if (value !== undefined && (!Number.isInteger(value) || value < least)) {
      throw new EdgeConfigError(`invalid edge config: ${field}: must be a whole number of at least ${least}, got ${JSON.stringify(value)}`);
    }
  }
}

// Every public and tunnel listener limit is a whole number above zero: 0 would refuse every connection or close it at once.
function checkPublicLimits(limits: Record<string, number | undefined> | undefined, section: string): void {
  for (const [field, value] of Object.entries(limits ?? {})) {
    if (value === undefined) continue;
    if (!Number.isInteger(value) || value < 1) {
      throw new EdgeConfigError(`invalid edge config: ${section}.${field}: must be a whole number above 0, got ${JSON.stringify(value)}`);
    }
  }
}

function parseUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

function ipv4ToNumber(text: string): number | undefined {
  const parts = text.split('.');
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255)) return undefined;
  return parts.reduce((n, p) => n * 256 + Number(p), 0);
}

/** parseCidr returns a membership test for an IPv4 CIDR such as 127.77.0.0/16. */
function parseCidr(cidr: string): (address: string) => boolean {
  const [base, bits] = cidr.split('/');
  const start = ipv4ToNumber(base ?? '');
  const prefix = Number(bits);
  if (start === undefined || !Number.isInteger(prefix) || prefix < 0 || prefix > 32) {
    throw new EdgeConfigError(`invalid edge config: listen.addressPool ${cidr} is not an IPv4 CIDR`);
  }
  const size = 2 ** (32 - prefix);
  const first = start - (start % size);
  return (address) => {
    const n = ipv4ToNumber(address);
    return n !== undefined && n >= first && n < first + size;
  };
}

/**
 * loadEdgeConfig reads a YAML or JSON file and reads the PEM files it names (relative to the file);
 * `acme.accountKeyFile` becomes an absolute path (relative to the file) and `acme.caFile` is read into `acme.ca`.
 */
export async function loadEdgeConfig(path: string): Promise<EdgeConfigFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new EdgeConfigError(`cannot read edge config ${path}`, { cause: err });
  }
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new EdgeConfigError(`edge config ${path} is not YAML or JSON: ${(err as Error).message}`, { cause: err });
  }
  const config = decodeEdgeConfig(doc);
  const base = dirname(path);
  const inline = async (pem: t.TypeOf<typeof PemSource>): Promise<void> => {
    if (pem.certFile !== undefined) pem.cert = await readFile(resolve(base, pem.certFile), 'utf8');
    if (pem.keyFile !== undefined) pem.key = await readFile(resolve(base, pem.keyFile), 'utf8');
  };
  if (config.listen.tunnel.tls !== undefined) await inline(config.listen.tunnel.tls);
  for (const cert of config.certificates ?? []) await inline(cert);
  if (config.acme !== undefined) {
    config.acme.accountKeyFile = resolve(base, config.acme.accountKeyFile);
    if (config.acme.caFile !== undefined) config.acme.ca = await readPem(resolve(base, config.acme.caFile), 'acme.caFile');
  }
  return config;
}

async function readPem(path: string, field: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    throw new EdgeConfigError(`invalid edge config: ${field}: cannot read ${path}`, { cause: err });
  }
}
