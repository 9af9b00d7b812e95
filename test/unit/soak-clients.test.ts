/**
 * The soak's clients (test/soak/soak-traffic.ts) see a connection closed under them at once and
 * say so, instead of waiting for the request timeout and looking like a hang; a TCP echo cut short
 * is a closed connection, not a wrong checksum; and the report names each failed request.
 */
import { expect } from 'chai';
import { createServer } from 'node:net';
import type { AddressInfo, Server } from 'node:net';
import { WebSocketServer } from 'ws';
import { tcpEcho, wsEcho } from '../soak/soak-traffic.js';
import { failureDetail } from '../soak/soak-report.js';

const codeOf = (p: Promise<unknown>): Promise<string> =>
  p.then(
    () => 'answered',
    (e: unknown) => String((e as { code?: string }).code ?? (e as Error).message),
  );

describe('soak clients: a connection closed under a request', () => {
  it('fails a WebSocket whose server side goes after the handshake at once, with its close code', async () => {
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise((r) => wss.once('listening', r));
    // the server side gone without a close frame, as a killed edge node's connection
    wss.on('connection', (ws) => ws.on('message', () => ws.terminate()));
    const { port } = wss.address() as AddressInfo;
    try {
      expect(await codeOf(wsEcho('127.0.0.1', port, 'app.test', 'hello'))).to.equal('closed websocket 1006 before the echo');
    } finally {
      await new Promise((r) => wss.close(r));
    }
  });

  it('fails a TCP echo cut short as a closed connection, naming how much came back', async () => {
    const server: Server = createServer((socket) => {
      socket.once('data', (chunk: Buffer) => {
        socket.write(chunk.subarray(0, 100));
        socket.destroy();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    try {
      expect(await codeOf(tcpEcho('127.0.0.1', port, Buffer.alloc(16 * 1024, 7)))).to.equal('closed after 100 of 16384 bytes');
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});

describe('soak report: each failed request named', () => {
  it('names kind, node, start and end from the fault and outcome, in start order, the rest counted', () => {
    const at = 1_000_000;
    const failed = [
      { kind: 'h2' as const, edge: 'A', start: at + 120, end: at + 130, outcome: 'ERR_HTTP2_STREAM_CANCEL' },
      { kind: 'ws' as const, edge: 'B', start: at - 50, end: at + 10, outcome: 'closed websocket 1006 before the echo' },
    ];
    expect(failureDetail(failed, at)).to.equal('ws via B -0.05→0.01 s closed websocket 1006 before the echo; h2 via A +0.12→0.13 s ERR_HTTP2_STREAM_CANCEL');
    const many = Array.from({ length: 14 }, (_, i) => ({ kind: 'h1' as const, edge: 'A', start: at + i, end: at + i, outcome: 'ECONNREFUSED' }));
    expect(failureDetail(many, at)).to.match(/; and 2 more$/);
  });
});
