/**
 * Field codecs shared by the tuna.dev/v1alpha1 kinds. Each one checks what the CRD's OpenAPI
 * schema checks (config/crd), so that manifests read from files (`tuna run --manifests`, which has
 * no API server in front of it) are held to the same rules as objects read from a cluster.
 */
import type { V1ObjectMeta } from '@kubernetes/client-node';
import * as t from 'io-ts';
import { closedObject } from '../codec/index.js';

/** TUNA_GROUP is the API group of tuna's custom resources. */
export const TUNA_GROUP = 'tuna.dev';

/** TUNA_API_VERSION is the only served version of tuna's custom resources. */
export const TUNA_API_VERSION = 'tuna.dev/v1alpha1';

/** apiVersionCodec accepts exactly `tuna.dev/v1alpha1`. */
export const apiVersionCodec = t.literal(TUNA_API_VERSION);

function isRecord(u: unknown): u is Record<string, unknown> {
  return typeof u === 'object' && u !== null && !Array.isArray(u);
}

/**
 * objectMetaCodec checks the metadata fields translation reads (name, namespace, generation,
 * creationTimestamp) and passes the rest through untouched: metadata belongs to the API server,
 * which has validated it already, and informer objects carry `Date` timestamps.
 */
export const objectMetaCodec = new t.Type<V1ObjectMeta, V1ObjectMeta, unknown>(
  'ObjectMeta',
  (u): u is V1ObjectMeta => isRecord(u) && typeof u.name === 'string',
  (u, c) => {
    if (!isRecord(u)) return t.failure(u, c, 'expected object');
    const problems: t.Errors = [];
    const at = (key: string, message: string): void => {
      problems.push({ value: u[key], context: t.appendContext(c, key, t.unknown, u[key]), message });
    };
    if (typeof u.name !== 'string' || u.name === '') at('name', 'expected a non-empty string');
    if (u.namespace !== undefined && typeof u.namespace !== 'string') at('namespace', 'expected string');
    if (u.generation !== undefined && !Number.isInteger(u.generation)) at('generation', 'expected integer');
    const ts = u.creationTimestamp;
    if (ts !== undefined && typeof ts !== 'string' && !(ts instanceof Date)) at('creationTimestamp', 'expected RFC 3339 timestamp');
    return problems.length > 0 ? t.failures(problems) : t.success(u as V1ObjectMeta);
  },
  t.identity,
);

/** isPortNumber says whether n is a TCP port number (1–65535, RFC 6335 §6). */
export function isPortNumber(n: unknown): n is number {
  return typeof n === 'number' && Number.isInteger(n) && n >= 1 && n <= 65535;
}

/** portNumberCodec accepts an integer 1–65535. */
export const portNumberCodec = new t.Type<number, number, unknown>(
  'integer 1-65535',
  isPortNumber,
  (u, c) => (isPortNumber(u) ? t.success(u) : t.failure(u, c, 'expected integer 1-65535')),
  t.identity,
);

/**
 * isPortName says whether s is a Service port name: an IANA service name (RFC 6335 §5.1: at most
 * 15 characters, lowercase letters, digits and inner single hyphens, at least one letter).
 */
export function isPortName(s: string): boolean {
  return s.length <= 15 && /^[a-z0-9]+(-[a-z0-9]+)*$/.test(s) && /[a-z]/.test(s);
}

/** servicePortCodec accepts a Service port by number (1–65535) or by name. */
export const servicePortCodec = new t.Type<number | string, number | string, unknown>(
  'number or string',
  (u): u is number | string => isPortNumber(u) || (typeof u === 'string' && isPortName(u)),
  (u, c) => {
    if (typeof u === 'number') return isPortNumber(u) ? t.success(u) : t.failure(u, c, 'expected integer 1-65535');
    if (typeof u === 'string') return isPortName(u) ? t.success(u) : t.failure(u, c, 'expected a port name (RFC 6335: lowercase letters, digits, hyphens; at most 15)');
    return t.failure(u, c, 'expected number or string');
  },
  t.identity,
);

/** reclaimPolicyCodec accepts `Delete` or `Retain` (what happens to the reservation when the resource goes). */
export const reclaimPolicyCodec = t.keyof({ Delete: null, Retain: null }, '"Delete" | "Retain"');

/** CrdReclaimPolicy is the decoded reclaim policy. */
export type CrdReclaimPolicy = t.TypeOf<typeof reclaimPolicyCodec>;

/** nonEmptyString accepts a string with at least one character. */
export const nonEmptyString = new t.Type<string, string, unknown>(
  'non-empty string',
  (u): u is string => typeof u === 'string' && u.length > 0,
  (u, c) => (typeof u === 'string' && u.length > 0 ? t.success(u) : t.failure(u, c, 'expected a non-empty string')),
  t.identity,
);

/** localObjectReferenceCodec names an object of the referrer's own namespace: `{name}` and nothing else. */
export const localObjectReferenceCodec = closedObject('LocalObjectReference', { name: nonEmptyString }, {});

/** LocalObjectReference is a reference to an object in the same namespace. */
export type LocalObjectReference = t.TypeOf<typeof localObjectReferenceCodec>;
