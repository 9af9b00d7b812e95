import net from 'node:net';

/**
 * probePort says whether something accepts TCP connections at host:port. `tuna http 3000` checks
 * before publishing so that a typo in the port is a warning at start, not a 503 later.
 */
export function probePort(host: string, port: number, timeoutMs = 1_000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}
