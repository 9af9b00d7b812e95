import { Counter, Registry } from 'prom-client';
import type { UdpDatagramDrop, UdpFlowRefusal, UdpObserver } from '../dataplane/index.js';

const DROPS: readonly UdpDatagramDrop[] = ['too-large', 'queue-full', 'backend-unreachable'];
const REFUSALS: readonly UdpFlowRefusal[] = ['udp-off', 'no-route', 'no-endpoint', 'backend-error'];

/**
 * UdpMetrics is the data plane's UDP observer in the operator: what the agent's end of the UDP
 * flows lost, by reason (docs/protocol.md §4.6), beside the edge's own
 * `tuna_edge_udp_datagrams_dropped_total`. `tuna_operator_udp_datagrams_dropped_total{reason}`
 * counts backend datagrams not sent towards the edge and datagrams the backend's host refused; `tuna_operator_udp_flows_refused_total{reason}`
 * counts flows answered non-2xx (the edge then drops what it held for them). Every reason starts at
 * 0, so a scrape shows the series before the first loss. Its registry is its own; OperatorHealth
 * renders it.
 */
export class UdpMetrics implements UdpObserver {
  /** registry holds the two counters. */
  readonly registry = new Registry();
  readonly #dropped = new Counter({
    name: 'tuna_operator_udp_datagrams_dropped_total',
    help: 'UDP datagrams the data plane lost, by reason (too-large, queue-full: from backends, not sent to the edge; backend-unreachable: refused by the backend host with ICMP).',
    labelNames: ['reason'],
    registers: [this.registry],
  });
  readonly #refused = new Counter({
    name: 'tuna_operator_udp_flows_refused_total',
    help: 'UDP flows the data plane refused (no route on a udp listener, no ready endpoint, UDP off, the backend socket failed), by reason.',
    labelNames: ['reason'],
    registers: [this.registry],
  });

  constructor() {
    for (const reason of DROPS) this.#dropped.inc({ reason }, 0);
    for (const reason of REFUSALS) this.#refused.inc({ reason }, 0);
  }

  /** dropped counts one datagram dropped. */
  dropped(reason: UdpDatagramDrop): void {
    this.#dropped.inc({ reason });
  }

  /** refused counts one flow refused. */
  refused(reason: UdpFlowRefusal): void {
    this.#refused.inc({ reason });
  }
}
