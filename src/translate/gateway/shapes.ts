/**
 * Shapes of the Gateway API fields tuna reads. The snapshot is typed, but its objects come from
 * manifest files or the API server as plain data; a field of the wrong type (a number where a
 * hostname goes, `null` in a list of rules) must become a status condition, not a crash and not a
 * silently wider match. shapeError walks an object against one of these descriptions.
 *
 * A description is a primitive name, `'object'` (any mapping), a list `[element]`, or a mapping of
 * field descriptions; a field name ending in `!` is required. Other fields are ignored.
 */

/** Shape describes the expected type of a value. */
export type Shape = 'string' | 'number' | 'boolean' | 'object' | readonly [Shape] | { readonly [field: string]: Shape };

const str = 'string';
const num = 'number';
const bool = 'boolean';

const backendRef = { group: str, kind: str, 'name!': str, namespace: str, port: num, weight: num } as const;
const headerValue = { 'name!': str, 'value!': str } as const;
const headerFilter = { set: [headerValue], add: [headerValue], remove: [str] } as const;
const pathModifier = { 'type!': str, replaceFullPath: str, replacePrefixMatch: str } as const;
const filter = {
  'type!': str,
  requestHeaderModifier: headerFilter,
  responseHeaderModifier: headerFilter,
  requestRedirect: { scheme: str, hostname: str, path: pathModifier, port: num, statusCode: num },
  urlRewrite: { hostname: str, path: pathModifier },
  requestMirror: { 'backendRef!': backendRef, percent: num, fraction: { 'numerator!': num, denominator: num } },
  cors: { allowOrigins: [str], allowMethods: [str], allowHeaders: [str], exposeHeaders: [str], allowCredentials: bool, maxAge: num },
  extensionRef: { group: str, kind: str, name: str },
} as const;
const parentRefs = [{ group: str, kind: str, namespace: str, 'name!': str, sectionName: str, port: num }] as const;
const namedMatch = { 'name!': str, type: str, 'value!': str } as const;
const ruleBackendRefs = [{ ...backendRef, filters: [filter] }] as const;

/** HTTP_ROUTE_SPEC is the HTTPRoute spec tuna reads. */
export const HTTP_ROUTE_SPEC: Shape = {
  parentRefs,
  hostnames: [str],
  rules: [
    {
      matches: [{ path: { type: str, value: str }, headers: [namedMatch], queryParams: [namedMatch], method: str }],
      filters: [filter],
      backendRefs: ruleBackendRefs,
      timeouts: { request: str, backendRequest: str },
      retry: { attempts: num, codes: [num], backoff: str },
    },
  ],
};

/** GRPC_ROUTE_SPEC is the GRPCRoute spec tuna reads. */
export const GRPC_ROUTE_SPEC: Shape = {
  parentRefs,
  hostnames: [str],
  rules: [{ matches: [{ method: { type: str, service: str, method: str }, headers: [namedMatch] }], filters: [filter], backendRefs: ruleBackendRefs }],
};

/** STREAM_ROUTE_SPEC is the TLSRoute / TCPRoute spec tuna reads. */
export const STREAM_ROUTE_SPEC: Shape = { parentRefs, hostnames: [str], rules: [{ backendRefs: [backendRef] }] };

/** PARENT_REFS is the part of any route needed to find its parents. */
export const PARENT_REFS: Shape = { parentRefs };

/** GATEWAY_SPEC is the Gateway spec tuna reads. */
export const GATEWAY_SPEC: Shape = {
  'gatewayClassName!': str,
  addresses: ['object'],
  infrastructure: { parametersRef: { group: str, kind: str, name: str } },
  tls: 'object',
  listeners: [
    {
      'name!': str,
      'port!': num,
      'protocol!': str,
      hostname: str,
      tls: { mode: str, certificateRefs: [{ group: str, kind: str, 'name!': str, namespace: str }] },
      allowedRoutes: {
        namespaces: {
          from: str,
          selector: { matchLabels: 'object', matchExpressions: [{ 'key!': str, 'operator!': str, values: [str] }] },
        },
        kinds: [{ group: str, 'kind!': str }],
      },
    },
  ],
};

/** GATEWAY_CLASS_SPEC is the GatewayClass spec tuna reads. */
export const GATEWAY_CLASS_SPEC: Shape = { 'controllerName!': str, parametersRef: { group: str, kind: str, name: str } };

/** REFERENCE_GRANT_SPEC is the ReferenceGrant spec tuna reads. */
export const REFERENCE_GRANT_SPEC: Shape = {
  from: [{ group: str, 'kind!': str, 'namespace!': str }],
  to: [{ group: str, 'kind!': str, name: str }],
};

/**
 * shapeError returns the path and problem of the first value that does not fit `shape` (`null` and
 * absent fields count as absent), or undefined when everything fits.
 */
export function shapeError(value: unknown, shape: Shape, path = 'spec'): string | undefined {
  const e = check(value, shape);
  return e === undefined ? undefined : `${path}${e}`;
}

/** FieldRule is one parsed field of a mapping shape. */
interface FieldRule {
  name: string;
  required: boolean;
  shape: Shape;
}

const parsed = new WeakMap<object, FieldRule[]>();

/** fieldsOf parses a mapping shape once (the `!` suffix) so that checks allocate nothing. */
function fieldsOf(shape: { readonly [field: string]: Shape }): FieldRule[] {
  let rules = parsed.get(shape);
  if (!rules) {
    rules = Object.entries(shape).map(([key, sub]) => ({ name: key.replace(/!$/, ''), required: key.endsWith('!'), shape: sub }));
    parsed.set(shape, rules);
  }
  return rules;
}

/** check returns the problem relative to `value` (`.a[2].b: expected a string`); paths are built only on failure. */
function check(value: unknown, shape: Shape): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof shape === 'string') {
    if (shape === 'object') return isMapping(value) ? undefined : ': expected an object';
    return typeof value === shape && (shape !== 'number' || Number.isFinite(value)) ? undefined : `: expected a ${shape}`;
  }
  if (Array.isArray(shape)) {
    if (!Array.isArray(value)) return ': expected a list';
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (item === null || item === undefined) return `[${i}]: empty entry`;
      const e = check(item, shape[0] as Shape);
      if (e !== undefined) return `[${i}]${e}`;
    }
    return undefined;
  }
  if (!isMapping(value)) return ': expected an object';
  for (const f of fieldsOf(shape as { readonly [field: string]: Shape })) {
    const v = value[f.name];
    if (f.required && (v === undefined || v === null)) return `.${f.name}: required`;
    const e = check(v, f.shape);
    if (e !== undefined) return `.${f.name}${e}`;
  }
  return undefined;
}

function isMapping(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
