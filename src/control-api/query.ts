import { ControlInvalidRequestError } from './errors.js';
import type { LabelSelector } from './records.js';

/**
 * Query strings of the control API, both ways: a label selector is `label.<key>=<value>` terms
 * (each part percent-encoded on its own, so keys and values may hold any text, `=` and `,`
 * included) and/or one Kubernetes-style `selector=cluster=c1,owner-uid=u1` for plain keys.
 */

/** AuditQuery filters and pages the audit log (GET /v1/audit, and the store's listAuditEvents). */
export interface AuditQuery {
  /** one account's events (an admin may name any account) */
  readonly accountId?: string;
  /** only events with a larger sequence number (for paging) */
  readonly afterSeq?: number;
  readonly limit?: number;
}

/** toQuery encodes parameters (undefined ones left out) as `?a=1&b=2`, or '' when there are none. */
export function toQuery(params: Readonly<Record<string, string | number | undefined>>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined) search.set(name, String(value));
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}

/** selectorQuery encodes a selector as `label.<key>=<value>` terms (what the client sends). */
export function selectorQuery(selector: LabelSelector | undefined): string {
  return toQuery(Object.fromEntries(Object.entries(selector ?? {}).map(([k, v]) => [`label.${k}`, v])));
}

/** parseSelector reads a label selector from a query (what the edge reads); undefined when it has none. */
export function parseSelector(query: URLSearchParams): LabelSelector | undefined {
  const selector: Record<string, string> = {};
  for (const term of (query.get('selector') ?? '').split(',')) {
    if (term === '') continue;
    const eq = term.indexOf('=');
    if (eq <= 0) throw new ControlInvalidRequestError('selector terms must be key=value', 'selector');
    selector[term.slice(0, eq)] = term.slice(eq + 1);
  }
  for (const [name, value] of query) {
    if (name.startsWith('label.') && name.length > 'label.'.length) selector[name.slice('label.'.length)] = value;
  }
  return Object.keys(selector).length ? selector : undefined;
}
