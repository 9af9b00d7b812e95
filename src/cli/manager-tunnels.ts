import { CodedError } from '../model/index.js';
import type { Binding } from '../model/index.js';
import type { TunnelManager, TunnelSpec } from '../tunnel/index.js';
import type { TunnelControl } from '../agent/index.js';
import type { AgentOptions } from './agent-options.js';
import { chooseKey, keyReferences } from './binding-keys.js';
import type { KeyChoice } from './binding-keys.js';
import { UsageError } from './errors.js';

/** KEY_REF is the key reference of the CLI's default key (the key source maps it to the key). */
export const CLI_KEY_REF = 'cli';

/** cliKeyReferences is what the CLI's key source resolves: the default key and every `--keys` entry. */
export function cliKeyReferences(options: AgentOptions): Map<string, string> {
  return keyReferences(options.keys ?? new Map(), options.key === undefined ? undefined : CLI_KEY_REF, options.key);
}

/**
 * BindingsFailedError: one or more bindings could not open their first tunnel. It names each
 * binding, the key it was opened with (never the key itself) and the edge's answer; `code` and
 * `statusCode` are the first failure's, so the CLI's exit table (explain.ts) applies unchanged.
 * The edge's 403 body is the same for every credential problem (protocol.md §2.3), so the agent
 * says which binding and which key it tried: the part of the reason only it knows.
 */
export class BindingsFailedError extends CodedError {
  /** statusCode is the HTTP status of the first refusal, when it was one */
  readonly statusCode: number | undefined;
  constructor(failures: readonly { binding: Binding; origin: string; err: Error }[], total: number) {
    const lines = failures.map(({ binding, origin, err }) => `${describeBinding(binding)} with the key from ${origin}: ${err.message}`);
    // One binding (tuna http, tuna tcp): the edge's answer first, as before, then whose it was.
    const only = failures[0]!;
    const first = only.err as Error & { code?: unknown; statusCode?: unknown };
    // The code is the first failure's (TUNA_TUNNEL_REFUSED, TUNA_EDGE_UNREACHABLE …), so the exit table applies unchanged.
    super(
      typeof first.code === 'string' ? first.code : 'TUNA_TUNNEL_FAILED',
      total === 1 ? `${only.err.message} (${describeBinding(only.binding)}, key from ${only.origin})` : `${failures.length} of ${total} bindings failed:\n  ${lines.join('\n  ')}`,
    );
    this.statusCode = typeof first.statusCode === 'number' ? first.statusCode : undefined;
  }
}

function describeBinding(binding: Binding): string {
  const names = binding.hostnames.length > 0 ? ` (${binding.hostnames.join(', ')})` : '';
  return `binding ${binding.id}${names}`;
}

/**
 * ManagerTunnels adapts the tunnel manager of src/tunnel to the agent. Every binding gets the
 * agent's edge and connection count, and its own key: its `--keys` entry, else the default key.
 * `apply` waits for the first outcome of each binding it adds and, if any failed, rejects naming
 * every failed binding (the manager keeps retrying in the background, but a CLI must say "refused
 * key" or "edge unreachable" at once, and exit).
 */
export class ManagerTunnels implements TunnelControl {
  private readonly held = new Set<string>();
  private readonly bindings = new Map<string, Binding>();
  private readonly starting = new Set<string>();
  /** the last failure reported per binding, so a reconnect loop says it once, and again when it changes */
  private readonly reported = new Map<string, string>();

  /** `report` gets a line for each failure of a binding that had started (a key revoked while serving). */
  constructor(
    private readonly manager: TunnelManager,
    private readonly options: AgentOptions,
    private readonly report?: (line: string) => void,
  ) {
    manager.on('tunnel-error', (id: string, err: Error) => this.onLaterError(id, err));
    manager.on('open', (id: string) => this.reported.delete(id));
  }

  private onLaterError(bindingId: string, err: Error): void {
    const binding = this.bindings.get(bindingId);
    if (this.report === undefined || binding === undefined || this.starting.has(bindingId) || this.reported.get(bindingId) === err.message) return;
    this.reported.set(bindingId, err.message);
    const origin = this.keyFor(binding).origin;
    this.report(`${describeBinding(binding)} with the key from ${origin}: ${err.message} (retrying)`);
  }

  /** apply hands the specs to the manager and waits for the new bindings' first connections. */
  async apply(bindings: readonly Binding[]): Promise<void> {
    const choices = new Map<string, KeyChoice>(bindings.map((b) => [b.id, this.keyFor(b)]));
    const added = bindings.filter((b) => !this.held.has(b.id));
    const waiting = added.map((b) => this.firstOutcome(b.id));
    const specs: TunnelSpec[] = bindings.map((b) => ({ bindingId: b.id, edges: [this.options.edge], connections: this.options.connections, keyRef: choices.get(b.id)!.keyRef }));
    for (const b of added) this.starting.add(b.id);
    this.bindings.clear();
    for (const b of bindings) this.bindings.set(b.id, b);
    this.manager.apply(specs);
    this.held.clear();
    for (const b of bindings) this.held.add(b.id);
    const outcomes = await Promise.allSettled(waiting);
    for (const b of added) this.starting.delete(b.id);
    const failures = outcomes.flatMap((o, i) =>
      o.status === 'rejected' ? [{ binding: added[i]!, origin: choices.get(added[i]!.id)!.origin, err: o.reason instanceof Error ? o.reason : new Error(String(o.reason)) }] : [],
    );
    if (failures.length > 0) throw new BindingsFailedError(failures, added.length);
  }

  private keyFor(binding: Binding): KeyChoice {
    const choice = chooseKey(binding, this.options.keys ?? new Map(), this.options.key === undefined ? undefined : CLI_KEY_REF);
    if (choice === undefined) throw new UsageError(`${describeBinding(binding)} has no key: add its hostname or id to the --keys file, or pass --key for the rest`);
    return choice;
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
