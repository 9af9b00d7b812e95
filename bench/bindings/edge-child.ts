/**
 * The edge of the many-bindings memory bench: `tuna edge`'s startEdge on the config file named by
 * argv[2]. It prints `tunnel <port>` when listening and `measured` after a full GC whenever its
 * parent writes a line to stdin, so RSS is read at a quiet moment.
 */
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { decodeEdgeConfig, startEdge } from '../../src/edge/index.js';

const config = decodeEdgeConfig(JSON.parse(readFileSync(process.argv[2] as string, 'utf8')));
const edge = await startEdge(config, { log: () => undefined });
console.log(`tunnel ${edge.address().tunnel.port}`);
const gc = (globalThis as { gc?: () => void }).gc;
for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'count') console.log(`count ${edge.registry.all().length}`);
  else {
    gc?.();
    const m = process.memoryUsage();
    console.log(`measured ${m.heapUsed} ${m.heapTotal} ${m.external}`);
  }
}
await edge.close();
