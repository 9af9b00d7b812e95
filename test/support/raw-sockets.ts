import { once } from 'node:events';
import { connect } from 'node:net';
import type { Socket } from 'node:net';

/** Raw loopback connections for tests that misbehave on purpose (silent, half-sent, trickled). */

/** dial opens one loopback connection, from `localAddress` when given (any 127/8 address works on Linux). */
export async function dial(port: number, localAddress?: string): Promise<Socket> {
  const socket = connect({ host: '127.0.0.1', port, ...(localAddress !== undefined ? { localAddress } : {}) });
  socket.on('error', () => undefined);
  await once(socket, 'connect');
  return socket;
}

/** closedWithin is true when the peer closes the socket before `boundMs` (a bound, not a timing assertion). */
export function closedWithin(socket: Socket, boundMs: number): Promise<{ closed: boolean; bytes: number }> {
  let bytes = 0;
  socket.on('data', (chunk: Buffer) => (bytes += chunk.length));
  socket.resume();
  if (socket.closed) return Promise.resolve({ closed: true, bytes });
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve({ closed: false, bytes }), boundMs);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve({ closed: true, bytes });
    });
  });
}

/** exchange writes `text` on a new connection and returns everything read until the peer closes (or `boundMs`). */
export async function exchange(port: number, text: string, boundMs = 5000): Promise<string> {
  const socket = await dial(port);
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  socket.write(text);
  await closedWithin(socket, boundMs);
  socket.destroy();
  return Buffer.concat(chunks).toString('latin1');
}
