import { Counter, Registry } from 'prom-client';
import type { Downstream, ExchangeObserver } from '../dataplane/index.js';
import type { HeaderMap } from '../dataplane/index.js';
import type { TunnelStreamContext } from '../wire/index.js';

/** NO_RESPONSE is the `code` of an exchange that ended before any response was sent (the client left, a reset). */
export const NO_RESPONSE = 'none';

/**
 * RequestMetrics is the data plane's observer in the operator: it counts every HTTP exchange the
 * data plane serves by binding and response status, `tuna_operator_requests_total{binding,code}`.
 * Both labels are bounded: the binding ids are the graph's (what the cluster publishes), the
 * codes HTTP's; the path, host or client never become a label. Raw TCP streams are not HTTP
 * exchanges and are not counted here. Its registry is its own; OperatorHealth renders it.
 */
export class RequestMetrics implements ExchangeObserver {
  /** registry holds the request counter. */
  readonly registry = new Registry();
  readonly #requests = new Counter({
    name: 'tuna_operator_requests_total',
    help: 'HTTP requests the data plane served, by binding and response status (none: ended before a response).',
    labelNames: ['binding', 'code'],
    registers: [this.registry],
  });

  /** observe follows one exchange to its end and counts it then, with the status it was answered with. */
  observe(ds: Downstream, context: TunnelStreamContext): void {
    let status = 0;
    const respond = ds.respond;
    ds.respond = (code: number, headers: HeaderMap, options?: Parameters<Downstream['respond']>[2]) => {
      status = code;
      respond.call(ds, code, headers, options);
    };
    ds.onClose(() => this.#requests.inc({ binding: context.bindingId, code: status === 0 ? NO_RESPONSE : String(status) }));
  }
}
