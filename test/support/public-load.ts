import { Agent, request as httpRequest } from 'node:http';

/** Load on an edge's public HTTP port, shared by the tunnel load tests. */

/** fetchStatus sends one keep-alive GET and resolves with its status after reading the whole body. */
export function fetchStatus(port: number, path: string, agent: Agent, host = 'app.test'): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers: { host }, agent }, (res) => {
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

/**
 * requestsWhile sends GETs for `host` on one keep-alive connection until `isDone` (at least 20,
 * at most 5,000), resolving with their statuses (0: the request failed): the other client of an
 * abuse test, whose requests must all be answered while the abuse goes on.
 */
export async function requestsWhile(port: number, host: string, isDone: () => boolean): Promise<number[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const statuses: number[] = [];
  try {
    for (let i = 0; i < 5000 && (i < 20 || !isDone()); i++) statuses.push(await fetchStatus(port, '/', agent, host).catch(() => 0));
  } finally {
    agent.destroy();
  }
  return statuses;
}
