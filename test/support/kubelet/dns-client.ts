// dns-client.ts — one DNS query over UDP or TCP, for tests of the coredns stand-in.
import dgram from 'node:dgram';
import net from 'node:net';
import { decodeResponse, encodeQuery, type DecodedResponse } from './dns-wire.js';

/** DnsExchange is a response and the local address and port the query left from. */
export interface DnsExchange {
  readonly response: DecodedResponse;
  readonly localAddress: string;
  readonly localPort: number;
}

/** queryDns sends one query to host:port and waits up to timeoutMs for its answer. */
export function queryDns(
  host: string,
  port: number,
  name: string,
  type: number,
  transport: 'udp' | 'tcp',
  timeoutMs = 3000,
): Promise<DnsExchange> {
  const id = Math.floor(Math.random() * 0x10000);
  const query = encodeQuery(id, name, type);
  return transport === 'udp' ? queryUdp(host, port, id, query, timeoutMs) : queryTcp(host, port, id, query, timeoutMs);
}

function queryUdp(host: string, port: number, id: number, query: Buffer, timeoutMs: number): Promise<DnsExchange> {
  return new Promise((resolve, reject) => {
    const socket = dgram.createSocket(net.isIPv6(host) ? 'udp6' : 'udp4');
    const timer = setTimeout(() => finish(new Error(`no DNS answer from ${host}:${port} over UDP within ${timeoutMs} ms`)), timeoutMs);
    const finish = (error: Error | undefined, exchange?: DnsExchange) => {
      clearTimeout(timer);
      socket.close();
      if (error) reject(error);
      else resolve(exchange as DnsExchange);
    };
    socket.on('error', (error) => finish(error));
    socket.on('message', (message) => {
      try {
        const response = decodeResponse(message);
        if (response.id !== id) return;
        const local = socket.address();
        finish(undefined, { response, localAddress: local.address, localPort: local.port });
      } catch (error) {
        finish(error as Error);
      }
    });
    socket.connect(port, host, () => socket.send(query));
  });
}

function queryTcp(host: string, port: number, id: number, query: Buffer, timeoutMs: number): Promise<DnsExchange> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host, port });
    let pending = Buffer.alloc(0);
    const timer = setTimeout(() => finish(new Error(`no DNS answer from ${host}:${port} over TCP within ${timeoutMs} ms`)), timeoutMs);
    const finish = (error: Error | undefined, exchange?: DnsExchange) => {
      clearTimeout(timer);
      socket.destroy();
      if (error) reject(error);
      else resolve(exchange as DnsExchange);
    };
    socket.on('error', (error) => finish(error));
    socket.on('connect', () => {
      const prefix = Buffer.alloc(2);
      prefix.writeUInt16BE(query.length, 0);
      socket.write(Buffer.concat([prefix, query]));
    });
    socket.on('data', (chunk) => {
      pending = Buffer.concat([pending, chunk]);
      if (pending.length < 2 || pending.length < 2 + pending.readUInt16BE(0)) return;
      try {
        const response = decodeResponse(pending.subarray(2, 2 + pending.readUInt16BE(0)));
        if (response.id !== id) return void finish(new Error(`answer id ${response.id} is not the query's ${id}`));
        finish(undefined, { response, localAddress: socket.localAddress ?? '', localPort: socket.localPort ?? 0 });
      } catch (error) {
        finish(error as Error);
      }
    });
  });
}
