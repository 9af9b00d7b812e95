import type { Backend, HttpFilter, HttpMatch, RetryPolicy, RouteTimeouts } from '../../model/index.js';
import type { Problem } from './context.js';
import type { RouteVerdict } from './route-status.js';

/** CompiledRule is one valid route rule in graph terms, ready to be placed on virtual hosts. */
export interface CompiledRule {
  index: number;
  matches: HttpMatch[];
  filters: HttpFilter[];
  backends: Backend[];
  timeouts?: RouteTimeouts;
  retry?: RetryPolicy;
}

/** RuleOutcome is a compiled rule, or why it was dropped. */
export type RuleOutcome = { rule: CompiledRule; unresolved: Problem[] } | { dropped: Problem; unresolved: Problem[] };

/**
 * verdictOf folds rule outcomes into the route verdict (Gateway API PartiallyInvalid, "Drop Rule(s)"
 * approach): dropped rules are listed in a message starting "Dropped Rule"; if every rule was
 * dropped the route is not accepted, with the first dropped rule's reason.
 */
export function verdictOf(outcomes: RuleOutcome[], routeProblem?: Problem): { rules: CompiledRule[]; verdict: RouteVerdict } {
  const rules: CompiledRule[] = [];
  const dropped: string[] = [];
  let firstDrop: Problem | undefined;
  const unresolved: Problem[] = [];
  const seen = new Set<string>();
  outcomes.forEach((o, i) => {
    for (const u of o.unresolved) {
      if (seen.has(u.message)) continue;
      seen.add(u.message);
      unresolved.push(u);
    }
    if ('rule' in o) rules.push(o.rule);
    else {
      firstDrop ??= o.dropped;
      dropped.push(`rule ${i}: ${o.dropped.message}`);
    }
  });
  const verdict: RouteVerdict = { unresolved };
  if (routeProblem) verdict.invalid = routeProblem;
  else if (outcomes.length > 0 && rules.length === 0 && firstDrop) verdict.invalid = { reason: firstDrop.reason, message: dropped.join('; ') };
  else if (dropped.length > 0) verdict.partial = `Dropped Rule(s): ${dropped.join('; ')}`;
  return { rules, verdict };
}

/**
 * finishBackends applies the HTTPRoute rule rules for "no forwarding": a rule that neither forwards
 * (no backendRefs, or all of weight 0) nor answers by itself (redirect, direct response) answers 500.
 */
export function finishBackends(filters: HttpFilter[], backends: Backend[]): { filters: HttpFilter[]; backends: Backend[] } {
  const answers = filters.some((f) => f.type === 'RequestRedirect' || f.type === 'DirectResponse');
  const total = backends.reduce((n, b) => n + b.weight, 0);
  if (answers || total > 0) return { filters, backends };
  return { filters: [...filters, { type: 'DirectResponse', statusCode: 500 }], backends: [] };
}
