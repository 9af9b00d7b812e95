/**
 * TCPPort → Reservation (kind tcp-port; port 0 = any port from the edge's pool). A specific port
 * is reserved once: a second TCPPort asking for it is refused with reason `PortAlreadyReserved`.
 */
import type { TCPPort } from '../../crd/index.js';
import type { Reservation } from '../../model/index.js';
import type { StatusBook } from '../common/meta.js';
import { sourceOf } from '../common/meta.js';
import type { Problem } from './status.js';
import { acceptObject, crdKey, crdRef, rejectObject } from './status.js';

/** TcpPortOutcome is what a Tunnel's tcpPortRef finds: the requested port (0 = any) or the TCPPort's problem. */
export type TcpPortOutcome = { ok: true; port: number } | { ok: false; problem: Problem };

/** TcpPortResult is the TCPPort part of the translation. */
export interface TcpPortResult {
  reservations: Reservation[];
  /** by `<namespace>/<name>`: every TCPPort that decoded */
  outcomes: Map<string, TcpPortOutcome>;
}

/** translateTcpPorts turns decoded TCPPorts (oldest first) into reservations and statuses. */
export function translateTcpPorts(ports: readonly TCPPort[], book: StatusBook): TcpPortResult {
  const reservations: Reservation[] = [];
  const outcomes = new Map<string, TcpPortOutcome>();
  const holders = new Map<number, TCPPort>();
  for (const tcpPort of ports) {
    const key = crdKey(tcpPort);
    const port = tcpPort.spec.port ?? 0;
    const holder = port === 0 ? undefined : holders.get(port);
    if (holder) {
      const problem: Problem = { reason: 'PortAlreadyReserved', message: `port ${port} is already reserved by TCPPort ${crdKey(holder)}, which is older` };
      rejectObject(book, tcpPort, 'TCPPort', problem, { requestedPort: port });
      outcomes.set(key, { ok: false, problem });
      continue;
    }
    if (port !== 0) holders.set(port, tcpPort);
    const reclaimPolicy = tcpPort.spec.reclaimPolicy ?? 'Delete';
    reservations.push({
      id: `reservation/tcp-port/${key}`,
      kind: 'tcp-port',
      port,
      reclaimPolicy,
      source: sourceOf(crdRef(tcpPort, 'TCPPort')),
    });
    acceptObject(
      book,
      tcpPort,
      'TCPPort',
      `${port === 0 ? 'any port from the edge pool' : `port ${port}`} (reclaimPolicy ${reclaimPolicy})`,
      'waiting for the edge to reserve the port',
      { requestedPort: port },
    );
    outcomes.set(key, { ok: true, port });
  }
  return { reservations, outcomes };
}
