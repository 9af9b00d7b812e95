import type { V1LabelSelector } from '@kubernetes/client-node';

/**
 * matchesLabelSelector evaluates a Kubernetes label selector (matchLabels and matchExpressions with
 * In, NotIn, Exists, DoesNotExist; all terms ANDed). An unknown operator matches nothing, so a typo
 * never widens what a listener admits.
 */
export function matchesLabelSelector(selector: V1LabelSelector, labels: Record<string, string>): boolean {
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const value = labels[e.key];
    const values = e.values ?? [];
    switch (e.operator) {
      case 'In':
        if (value === undefined || !values.includes(value)) return false;
        break;
      case 'NotIn':
        if (value !== undefined && values.includes(value)) return false;
        break;
      case 'Exists':
        if (value === undefined) return false;
        break;
      case 'DoesNotExist':
        if (value !== undefined) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}
