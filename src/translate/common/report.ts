import type { Condition, ObjectStatus } from '../../model/index.js';
import { condition, warning } from './status.js';
import type { TunaReason } from './reasons.js';

/**
 * ProblemCondition is the condition type a problem is reported under: `Accepted` for parts of the
 * spec tuna refuses (a bad host, path or port), `ResolvedRefs` for references that do not resolve
 * (Services, Secrets), `Conflicted` for parts another object already serves.
 */
export type ProblemCondition = 'Accepted' | 'ResolvedRefs' | 'Conflicted';

/** Problem is one user mistake found while translating an object: it becomes a condition and a Warning event. */
export interface Problem {
  condition: ProblemCondition;
  reason: TunaReason;
  message: string;
}

/** ReportPlan says which conditions an object kind carries and what it published. */
export interface ReportPlan {
  /** the problem conditions this kind reports, in order (each is written even when all is well) */
  types: ProblemCondition[];
  /** the message of `Accepted=True` */
  acceptedMessage: string;
  /** what reached the graph, for the `Published` message (`http://a.example.com`, `tcp port 5432`) */
  published: string[];
}

const healthy: Record<ProblemCondition, { status: boolean; reason: TunaReason; message: string }> = {
  Accepted: { status: true, reason: 'Accepted', message: '' },
  ResolvedRefs: { status: true, reason: 'ResolvedRefs', message: 'every Service and Secret reference resolved' },
  Conflicted: { status: false, reason: 'NoConflicts', message: 'no part is shadowed by another object' },
};

/**
 * writeReport turns an object's problems into conditions and Warning events. Kubernetes keys
 * conditions by type, so the problems of one type share one condition: its reason is the first
 * problem's and its message lists them all (sentences joined by `. `), in spec order. `Published` is True/`Published` when
 * everything asked for is served, True/`PartiallyPublished` when something is not (every problem
 * leaves something out), False/`NotPublished` when nothing is.
 */
export function writeReport(status: ObjectStatus, problems: Problem[], plan: ReportPlan): void {
  const gen = status.observedGeneration;
  const conditions: Condition[] = plan.types.map((type) => {
    const own = problems.filter((p) => p.condition === type);
    const first = own[0];
    if (first === undefined) {
      const h = healthy[type];
      return condition(type, h.status, h.reason, type === 'Accepted' ? plan.acceptedMessage : h.message, gen);
    }
    // Conflicted is a "bad when True" condition (as in the Gateway API); the others are "good when True".
    return condition(type, type === 'Conflicted', first.reason, own.map((p) => p.message).join('. '), gen);
  });
  conditions.push(publishedCondition(problems.length, plan.published, gen));
  status.conditions.push(...conditions);
  status.events.push(...problems.map((p) => warning(p.reason, p.message)));
}

function publishedCondition(problemCount: number, published: string[], gen: number | undefined): Condition {
  if (published.length === 0)
    return condition('Published', false, 'NotPublished', 'nothing is published; see the other conditions and the Warning events', gen);
  const list = `published: ${published.join(', ')}`;
  if (problemCount > 0)
    return condition('Published', true, 'PartiallyPublished', `${list}; some parts are not published, see the other conditions`, gen);
  return condition('Published', true, 'Published', list, gen);
}
