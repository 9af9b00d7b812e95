import type { RouteGraph } from '../../model/index.js';
import type { Agent } from '../../agent/index.js';
import type { CliIo } from '../io.js';
import type { Logger } from '../log.js';

/**
 * serveUntilStopped applies the graph, logs the banner and serves until SIGINT/SIGTERM, then
 * drains: tunnels send GOAWAY and in-flight requests finish before the process exits.
 * `afterApply` runs once the first graph is served (the file provider starts watching then, so a
 * reload never races the first apply). `stop` replaces the process's SIGINT/SIGTERM (an agent
 * process of `tuna http --processes` also stops when its primary says so).
 */
export async function serveUntilStopped(agent: Agent, graph: RouteGraph, io: CliIo, log: Logger, banner: string[], afterApply?: () => void, stop: Promise<string> = io.stopSignal): Promise<number> {
  try {
    await agent.apply(graph);
    afterApply?.();
  } catch (err) {
    await agent.close().catch(() => undefined);
    throw err;
  }
  for (const line of banner) log.info(line);
  const signal = await stop;
  log.notice(`${signal}: closing tunnels (in-flight requests finish first)`, { signal });
  await agent.close();
  return 0;
}
