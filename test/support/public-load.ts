import { Agent, request as httpRequest } from 'node:http';

/** Load on an edge's public HTTP port, shared by the tunnel load tests. */

/** fetchStatus sends one keep-alive GET and resolves with its status after reading the whole body. */
export function fetchStatus(port: number, path: string, agent: Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers: { host: 'app.test' }, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * loadThenLeave keeps `connections` keep-alive connections busy and, after `answers` responses,
 * destroys them all with their requests in flight, the way wrk ends a run: the tunnel's late
 * responses then meet public responses that are already closed. Resolves with the statuses seen.
 */
export async function loadThenLeave(port: number, path: string, connections: number, answers: number): Promise<number[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const statuses: number[] = [];
  const worker = async (): Promise<void> => {
    while (statuses.length < answers) {
      const status = await fetchStatus(port, path, agent).catch(() => undefined);
      if (status === undefined) return;
      statuses.push(status);
      if (statuses.length >= answers) agent.destroy();
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
  agent.destroy();
  return statuses;
}
