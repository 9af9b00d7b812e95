import type { Binding } from '../model/index.js';
import type { TunnelManager, TunnelSpec } from '../tunnel/index.js';
import type { TunnelControl } from '../agent/index.js';
import type { AgentOptions } from './agent-options.js';

/** KEY_REF is the key reference of the CLI's one key (the key source maps it to the key). */
export const CLI_KEY_REF = 'cli';

/**
 * ManagerTunnels adapts the tunnel manager of src/tunnel to the agent. Every binding gets the
 * agent's edge, connection count and key. `apply` waits for the first connection of each binding
 * it adds, and rejects with the first failure instead (the manager keeps retrying in the
 * background, but a CLI must say "refused key" or "edge unreachable" at once, and exit).
 */
export class ManagerTunnels implements TunnelControl {
  private readonly held = new Set<string>();

  constructor(
    private readonly manager: TunnelManager,
    private readonly options: AgentOptions,
  ) {}

  /** apply hands the specs to the manager and waits for the new bindings' first connections. */
  async apply(bindings: readonly Binding[]): Promise<void> {
    const added = bindings.map((b) => b.id).filter((id) => !this.held.has(id));
    const waiting = added.map((id) => this.firstOutcome(id));
    const specs: TunnelSpec[] = bindings.map((b) => ({ bindingId: b.id, edges: [this.options.edge], connections: this.options.connections, keyRef: CLI_KEY_REF }));
    this.manager.apply(specs);
    this.held.clear();
    for (const b of bindings) this.held.add(b.id);
    await Promise.all(waiting);
  }

  private firstOutcome(bindingId: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const onOpen = (id: string): void => {
        if (id !== bindingId) return;
        done();
        resolve();
      };
      const onError = (id: string, err: Error): void => {
        if (id !== bindingId) return;
        done();
        reject(err);
      };
      const done = (): void => {
        this.manager.off('open', onOpen);
        this.manager.off('tunnel-error', onError);
      };
      this.manager.on('open', onOpen);
      this.manager.on('tunnel-error', onError);
    });
  }

  /** close drains every tunnel. */
  close(): Promise<void> {
    return this.manager.close();
  }
}
