// dns-server.ts — the coredns stand-in's servers: UDP and TCP on each port of the Corefile's
// plans, answering whoami zones and refusing the rest (see dns-corefile.ts).
import dgram from 'node:dgram';
import net from 'node:net';
import { findZone, type ZonePlan } from './dns-corefile.js';
import {
  addressRecord,
  decodeQuery,
  DnsFormatError,
  encodeResponse,
  MAX_UDP_RESPONSE,
  queryId,
  RCODE,
  RCODE_NAME,
  srvRecord,
  type DnsQuery,
  type DnsResponse,
} from './dns-wire.js';

/** DnsClient is where a query came from and how. */
export interface DnsClient {
  readonly address: string;
  readonly port: number;
  readonly transport: 'udp' | 'tcp';
}

/** DnsAnswer is an encoded response and a line saying what it was (for the log). */
export interface DnsAnswer {
  readonly message: Buffer;
  readonly summary: string;
  readonly plan: ZonePlan | undefined;
}

function reply(query: DnsQuery, rcode: number, extra: Partial<DnsResponse> = {}): DnsResponse {
  return {
    id: query.id,
    opcode: query.opcode,
    authoritative: false,
    recursionDesired: query.recursionDesired,
    checkingDisabled: query.checkingDisabled,
    rcode,
    question: query.question,
    ...extra,
  };
}

/** answerQuery answers one message that arrived on `port`; undefined means drop it (a response, or unreadable). */
export function answerQuery(plans: readonly ZonePlan[], port: number, message: Buffer, client: DnsClient): DnsAnswer | undefined {
  let query: DnsQuery;
  try {
    query = decodeQuery(message);
  } catch (error) {
    const id = queryId(message);
    if (!(error instanceof DnsFormatError) || id === undefined || message.length < 12) return undefined;
    const formerr = encodeResponse({ id, opcode: 0, authoritative: false, recursionDesired: false, checkingDisabled: false, rcode: RCODE.FORMERR });
    return { message: formerr, summary: `FORMERR (${error.message})`, plan: undefined };
  }
  if (query.isResponse) return undefined;
  const finish = (response: DnsResponse, plan: ZonePlan | undefined, why: string): DnsAnswer => {
    let encoded = encodeResponse(response);
    if (client.transport === 'udp' && encoded.length > MAX_UDP_RESPONSE) {
      encoded = encodeResponse({ ...response, answers: [], authority: [], additional: [], truncated: true });
    }
    const name = query.question ? `${query.question.name} type ${query.question.type}` : '(no question)';
    return { message: encoded, summary: `${name} → ${RCODE_NAME[response.rcode] ?? response.rcode} (${why})`, plan };
  };
  if (query.opcode !== 0) return finish(reply(query, RCODE.NOTIMP), undefined, `opcode ${query.opcode} is not a query`);
  if (query.questionCount !== 1 || !query.question) return finish(reply(query, RCODE.FORMERR), undefined, `${query.questionCount} questions`);
  const plan = findZone(plans, port, query.question.name);
  if (!plan) return finish(reply(query, RCODE.REFUSED), undefined, 'no zone of the Corefile');
  if (plan.action === 'refuse') return finish(reply(query, RCODE.REFUSED), plan, `zone ${plan.zone}: ${plan.reason}`);
  // whoami, as coredns writes it: empty answer, the client's address and an SRV of its port in the additional section.
  const { name, class: dnsClass } = query.question;
  const srvName = name === '.' ? `_${client.transport}.` : `_${client.transport}.${name}`;
  const additional = [
    addressRecord(name, dnsClass, 0, client.address),
    srvRecord(srvName, dnsClass, 0, { priority: 0, weight: 0, port: client.port, target: '.' }),
  ];
  return finish(reply(query, RCODE.NOERROR, { authoritative: true, additional }), plan, `whoami ${client.address}:${client.port}`);
}

/** DnsServers are the listening sockets; close stops them all. */
export interface DnsServers {
  readonly ports: readonly number[];
  close(): Promise<void>;
}

/** unmapped turns an IPv4-mapped IPv6 address (::ffff:a.b.c.d) back into a.b.c.d. */
function unmapped(address: string): string {
  return address.startsWith('::ffff:') && net.isIPv4(address.slice(7)) ? address.slice(7) : address;
}

const MAX_TCP_MESSAGE = 65535;

/**
 * startDnsServers listens on UDP and TCP at `host` for every port of the plans; `listenPort` may move
 * a plan's port elsewhere (tests pass 0 for a free one) — zones are still matched by the plan's port.
 */
export async function startDnsServers(
  plans: readonly ZonePlan[],
  host: string,
  log: (line: string) => void,
  listenPort: (planPort: number) => number = (planPort) => planPort,
): Promise<DnsServers> {
  const closers: (() => Promise<void>)[] = [];
  const ports: number[] = [];
  const note = (plan: ZonePlan | undefined, client: DnsClient, summary: string) => {
    if (!plan || plan.logQueries || (plan.logErrors && !summary.includes('NOERROR'))) log(`${client.transport} ${client.address}:${client.port} ${summary}`);
  };
  for (const wanted of [...new Set(plans.map((plan) => plan.port))]) {
    const planPort = wanted;
    const onMessage = (udp: dgram.Socket, message: Buffer, rinfo: dgram.RemoteInfo): void => {
      const client: DnsClient = { address: unmapped(rinfo.address), port: rinfo.port, transport: 'udp' };
      const answer = answerQuery(plans, planPort, message, client);
      if (!answer) return;
      note(answer.plan, client, answer.summary);
      udp.send(answer.message, rinfo.port, rinfo.address);
    };
    const onConnection = (socket: net.Socket): void => {
      const client: DnsClient = { address: unmapped(socket.remoteAddress ?? ''), port: socket.remotePort ?? 0, transport: 'tcp' };
      let pending = Buffer.alloc(0);
      socket.setTimeout(10_000, () => socket.destroy());
      socket.on('error', () => socket.destroy());
      socket.on('data', (chunk) => {
        pending = Buffer.concat([pending, chunk]);
        if (pending.length > MAX_TCP_MESSAGE + 2) return void socket.destroy();
        while (pending.length >= 2 && pending.length >= 2 + pending.readUInt16BE(0)) {
          const message = pending.subarray(2, 2 + pending.readUInt16BE(0));
          pending = pending.subarray(2 + message.length);
          const answer = answerQuery(plans, planPort, message, client);
          if (!answer) continue;
          note(answer.plan, client, answer.summary);
          const prefix = Buffer.alloc(2);
          prefix.writeUInt16BE(answer.message.length, 0);
          socket.write(Buffer.concat([prefix, answer.message]));
        }
      });
    };
    const { udp, tcp, port } = await bindUdpAndTcp(host, listenPort(wanted), onMessage, onConnection);
    udp.on('error', (error) => log(`udp :${port}: ${error.message}`));
    ports.push(port);
    closers.push(
      () => new Promise<void>((resolve) => udp.close(() => resolve())),
      () => new Promise<void>((resolve) => tcp.close(() => resolve())),
    );
  }
  return { ports, close: async () => void (await Promise.all(closers.map((close) => close()))) };
}

/**
 * bindUdpAndTcp listens on one port number for both UDP and TCP. Asked for a free port (0), it
 * takes the one UDP got; when another process holds that number on TCP it starts again with a
 * new pair (bounded), so parallel test files taking ports do not make it fail.
 */
async function bindUdpAndTcp(
  host: string,
  wanted: number,
  onMessage: (udp: dgram.Socket, message: Buffer, rinfo: dgram.RemoteInfo) => void,
  onConnection: (socket: net.Socket) => void,
): Promise<{ udp: dgram.Socket; tcp: net.Server; port: number }> {
  for (let attempt = 0; ; attempt++) {
    const udp = dgram.createSocket({ type: net.isIPv6(host) ? 'udp6' : 'udp4' });
    await new Promise<void>((resolve, reject) => {
      udp.once('error', reject);
      udp.bind(wanted, host, () => resolve());
    });
    const port = udp.address().port;
    const tcp = net.createServer(onConnection);
    try {
      await new Promise<void>((resolve, reject) => {
        tcp.once('error', reject);
        tcp.listen(port, host, () => resolve());
      });
    } catch (error) {
      await new Promise<void>((resolve) => udp.close(() => resolve()));
      if (wanted !== 0 || attempt >= 20 || (error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
      continue;
    }
    udp.on('message', (message, rinfo) => onMessage(udp, message, rinfo));
    return { udp, tcp, port };
  }
}
