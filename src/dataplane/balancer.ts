import type { Backend } from '../model/index.js';

/** Random returns a number in [0, 1); injected so tests can make weighted choices deterministic. */
export type Random = () => number;

/**
 * pickBackend chooses one backend with probability weight / total weight (Gateway API
 * BackendRef.weight). Returns undefined when every weight is 0: the route then answers 500.
 */
export function pickBackend<T extends Pick<Backend, 'weight'>>(backends: readonly T[], random: Random): T | undefined {
  let total = 0;
  for (const b of backends) total += Math.max(0, b.weight);
  if (total <= 0) return undefined;
  let r = random() * total;
  for (const b of backends) {
    const w = Math.max(0, b.weight);
    if (r < w) return b;
    r -= w;
  }
  // Floating-point rounding can leave r just at total: fall back to the last backend with weight.
  for (let i = backends.length - 1; i >= 0; i--) if ((backends[i]?.weight ?? 0) > 0) return backends[i];
  return undefined;
}
