import { StaticCertificateSource, StaticEndpointResolver } from '../dataplane/index.js';
import type { TranslateOptions } from '../translate/index.js';
import type { Agent } from '../agent/index.js';
import type { AgentState } from '../agent/state.js';
import type { Logger } from './log.js';
import { ManifestWatcher, loadManifestObjects } from './manifests.js';
import { translateObjects } from '../agent/state.js';
import { problemsOf, summarizeGraph } from './summary.js';

/**
 * FileProvider is `tuna run`'s source: manifests from folders, translated like a cluster, applied
 * to an agent, and re-applied when a file changes. A reload that fails (a YAML typo mid-edit)
 * keeps the last good state and says why; a reload that changes only routes does not touch the
 * tunnels (Agent.apply compares bindings).
 */
export class FileProvider {
  /** endpoints and certificates of the last good reading, swapped on every reload */
  readonly endpoints = new StaticEndpointResolver();
  readonly certificates = new StaticCertificateSource();
  private watcher: ManifestWatcher | undefined;
  private reloading: Promise<void> = Promise.resolve();

  constructor(
    private readonly dirs: readonly string[],
    private readonly log: Logger,
    private readonly translateOptions: Partial<TranslateOptions> = {},
  ) {}

  /** read loads and translates the manifests once, and swaps in their endpoints and certificates. */
  async read(): Promise<AgentState> {
    const state = await this.translate();
    this.swapIn(state);
    return state;
  }

  private async translate(): Promise<AgentState> {
    return translateObjects(await loadManifestObjects(this.dirs), this.translateOptions);
  }

  private swapIn(state: AgentState): void {
    this.endpoints.replace(state.endpoints);
    this.certificates.replace(state.certificates);
  }

  /** report prints what a state publishes and every problem the translators found. */
  report(state: AgentState): void {
    const lines = summarizeGraph(state.graph);
    this.log.info(lines.length > 0 ? `Publishing:\n${lines.join('\n')}` : 'Publishing nothing: no object in the manifests is for tuna', { bindings: state.graph.bindings.length });
    const problems = problemsOf(state.statuses);
    if (problems.length > 0) this.log.warn(`Problems in the manifests:\n${problems.join('\n')}`, { problems: problems.length });
  }

  /** watch re-applies the manifests to the agent after each change (debounced). */
  watch(agent: Agent): void {
    this.watcher = new ManifestWatcher(this.dirs, () => {
      this.reloading = this.reloading.then(() => this.reload(agent));
    });
    this.watcher.start();
  }

  private async reload(agent: Agent): Promise<void> {
    try {
      const state = await this.translate();
      // a graph that fails validate() is refused before its endpoints and certificates are swapped in
      agent.admit(state.graph);
      this.swapIn(state);
      const { tunnelsChanged } = await agent.apply(state.graph);
      this.log.info(`Reloaded manifests: ${tunnelsChanged ? 'bindings changed, tunnels updated' : 'routes updated, tunnels untouched'}`, { tunnelsChanged });
      const problems = problemsOf(state.statuses);
      if (problems.length > 0) this.log.warn(`Problems in the manifests:\n${problems.join('\n')}`, { problems: problems.length });
    } catch (err) {
      this.log.warn('Reload failed, still serving the previous manifests', { err });
    }
  }

  /** close stops watching and waits for a reload in progress. */
  async close(): Promise<void> {
    this.watcher?.close();
    await this.reloading;
  }
}
