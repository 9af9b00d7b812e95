import type { TunnelControl } from '../../src/agent/index.js';
import type { Binding } from '../../src/model/index.js';

/** RecordingTunnels is a TunnelControl that holds nothing and records the binding ids of each apply. */
export class RecordingTunnels implements TunnelControl {
  applied: string[][] = [];
  apply(bindings: readonly Binding[]): Promise<void> {
    this.applied.push(bindings.map((b) => b.id));
    return Promise.resolve();
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}
