/**
 * direct: the client talks to the backend itself. Every ratio in the report is against this.
 */
import type { BenchContext, Contender } from '../contender.js';
import type { Target } from '../net.js';

/** directContender is the baseline: no hop between client and backend. */
export const directContender: Contender = {
  name: 'direct',
  describe: () => 'client → backend, no hop (the baseline)',
  start: (ctx: BenchContext): Promise<Target> => Promise.resolve({ port: ctx.backendPort }),
  stop: () => Promise.resolve(),
};
