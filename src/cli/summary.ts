import type { ObjectStatus, RouteGraph } from '../model/index.js';
import { refKey } from '../model/index.js';

/** summarizeGraph lists what a graph publishes, one line per binding. */
export function summarizeGraph(graph: RouteGraph): string[] {
  return graph.bindings.map((b) => {
    const routes = graph.virtualHosts
      .filter((v) => v.listenerId.startsWith(`${b.id}/`))
      .reduce((n, v) => n + v.routes.length, 0);
    const what = b.kind === 'host' ? b.hostnames.join(', ') : b.kind === 'tcp-port' ? `TCP port ${b.port === 0 ? '(any)' : String(b.port)}` : 'dedicated address';
    return `  ${b.id}: ${what}${routes > 0 ? ` (${routes} route${routes === 1 ? '' : 's'})` : ''}`;
  });
}

/**
 * problemsOf returns the Warning events of the statuses, one line each, so a user of the file
 * provider sees what an operator would have written on the objects.
 */
export function problemsOf(statuses: readonly ObjectStatus[]): string[] {
  return statuses.flatMap((s) => s.events.filter((e) => e.type === 'Warning').map((e) => `  ${refKey(s.ref)}: ${e.reason}: ${e.message}`));
}
