/**
 * Statuses the translators compute for the objects they read. The status writer turns them into
 * Kubernetes status subresources, Conditions and Events; translators never write anything.
 */

/** ObjectRef identifies a Kubernetes object. */
export interface ObjectRef {
  group: string;
  kind: string;
  namespace?: string;
  name: string;
}

/** Condition is a Kubernetes metav1.Condition without lastTransitionTime (the writer sets it). */
export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  observedGeneration?: number;
}

/** StatusEvent is an Event to record on the object (`Warning` for every problem a user must fix). */
export interface StatusEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

/**
 * ObjectStatus is what tuna says about one object: its tuna conditions (every kind has them), the
 * body of its `status` subresource where the kind has a structured one (Gateway API kinds, tuna.dev
 * CRDs, `status.loadBalancer` of Ingress and Service), and the events to record.
 */
export interface ObjectStatus {
  ref: ObjectRef;
  observedGeneration?: number;
  conditions: Condition[];
  status?: Record<string, unknown>;
  events: StatusEvent[];
}

/** refKey gives `group/kind/namespace/name`, the canonical sort key of an object. */
export function refKey(ref: ObjectRef): string {
  return `${ref.group || 'core'}/${ref.kind}/${ref.namespace ?? ''}/${ref.name}`;
}
