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
}
