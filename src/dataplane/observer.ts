import type { TunnelStreamContext } from '../wire/index.js';
import type { Downstream } from './exchange.js';

/**
 * ExchangeObserver sees every HTTP exchange the data plane serves: the hook of the request
 * inspector (src/inspector, docs/inspector.md). It is optional; a data plane built without one adds
 * nothing to the request path.
 */
export interface ExchangeObserver {
  /**
   * observe is called once per HTTP request as it arrives, before routing. It follows the exchange
   * to its end through the exchange itself (its `respond`, `out`, `body` and `onClose`), and must
   * neither consume the body nor change what is sent.
   */
  observe(ds: Downstream, context: TunnelStreamContext): void;
  /** routed, when present, is told the id of the route that matched an exchange (the access log names it) */
  routed?(ds: Downstream, routeId: string): void;
}

/**
 * combineObservers makes one observer of several (the operator's request counter and its access
 * log, the inspector and the access log of `tuna http`): undefined for none, the one itself for one,
 * so a data plane with no observer still adds nothing to the request path.
 */
export function combineObservers(observers: readonly (ExchangeObserver | undefined)[]): ExchangeObserver | undefined {
  const all = observers.filter((o): o is ExchangeObserver => o !== undefined);
  if (all.length <= 1) return all[0];
  const routed = all.filter((o) => o.routed !== undefined);
  return {
    observe: (ds, context) => {
      for (const o of all) o.observe(ds, context);
    },
    ...(routed.length > 0 ? { routed: (ds: Downstream, routeId: string) => routed.forEach((o) => o.routed!(ds, routeId)) } : {}),
  };
}
