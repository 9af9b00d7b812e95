/**
 * inProcessOperator wires an Operator in the test's own process against the test cluster and a
 * store-mode edge (test/support/operator-wiring.ts), writing statuses and pushing every error to
 * `errors` for the test to assert empty. On the shared cluster another test's namespace may be
 * terminating and refuse writes (403 NamespaceTerminating): `counts` says which objects' write
 * errors are this test's concern (default: all).
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { ControlClient } from '../../src/control-api/index.js';
import { EventRecorder, Finalizers, KubeObjects, StatusWriter } from '../../src/operator/index.js';
import type { EdgeReconcilerOptions } from '../../src/operator/index.js';
import type { StoreEdge } from '../support/edge-store-harness.js';
import { wireOperator } from '../support/operator-wiring.js';
import type { WiredOperator } from '../support/operator-wiring.js';

export interface InProcessOperatorOptions {
  /** what `tuna operator` would learn from GET /v1/edge, and the cluster id of its reservations */
  reconciler: EdgeReconcilerOptions;
  errors: string[];
  /** whether a write error about this object counts (default: every one) */
  counts?: (ref: { namespace?: string }) => boolean;
  /** record events (EventRecorder) */
  events?: boolean;
  /** hold the tuna.dev CRDs' finalizers */
  finalizers?: boolean;
  baseDomain?: string;
  recheckMs?: number;
  retryMs?: number;
}

/** inProcessOperator makes the operator (not started: the caller awaits `operator.start()`). */
export function inProcessOperator(config: KubeConfig, edge: StoreEdge, client: ControlClient, o: InProcessOperatorOptions): WiredOperator {
  const counts = o.counts ?? (() => true);
  const report = (what: string) => (ref: { kind: string; name: string; namespace?: string }, err: unknown) => {
    if (counts(ref)) o.errors.push(`${what} ${ref.kind}/${ref.name}: ${String(err)}`);
  };
  return wireOperator({
    objects: new KubeObjects(config, { debounceMs: 50, retryMs: 500 }),
    edge,
    client,
    reconciler: o.reconciler,
    options: {
      writer: new StatusWriter(config, { onError: report('status') }),
      ...(o.events === true ? { events: new EventRecorder(config, { onError: report('event') }) } : {}),
      ...(o.finalizers === true ? { finalizers: new Finalizers(config, { onError: report('finalizer') }) } : {}),
      ...(o.baseDomain !== undefined ? { translate: { baseDomain: o.baseDomain } } : {}),
      ...(o.recheckMs !== undefined ? { recheckMs: o.recheckMs } : {}),
      ...(o.retryMs !== undefined ? { retryMs: o.retryMs } : {}),
      onError: (err) => o.errors.push(`sync: ${String(err)}`),
    },
  });
}
