import * as t from 'io-ts';
import { UsageError } from '../errors.js';
import { decodeFlags, parseFlags } from '../flags.js';
import { commandHelp } from '../help.js';
import type { CliIo } from '../io.js';
import { createLogger, logFlagOptions, resolveLogFormat } from '../log.js';
import type { CliRuntime } from '../runtime.js';
import { pick } from './http.js';

const EdgeFlags = t.type({ config: t.string });

const options = { config: { type: 'string' }, ...logFlagOptions } as const;

/** edgeCommand is `tuna edge --config FILE`: it runs an edge until SIGINT/SIGTERM, then drains it. */
export async function edgeCommand(args: string[], io: CliIo, runtime: CliRuntime): Promise<number> {
  const parsed = parseFlags(args, options, 'edge');
  if (parsed.values.help === true) return (io.out(commandHelp.edge!), 0);
  if (parsed.values.config === undefined) throw new UsageError('tuna edge: --config FILE is required (see tuna edge --help)');
  if (parsed.positionals.length > 0) throw new UsageError(`tuna edge: unexpected argument ${JSON.stringify(parsed.positionals[0])}`);
  const flags = decodeFlags(EdgeFlags, pick(parsed.values, ['config']), 'edge');
  const log = createLogger(io, resolveLogFormat(parsed.values, io.env, 'edge'));
  const edge = await runtime.startEdgeFromFile(flags.config, (line) => log.notice(line));
  const ports = edge.httpPort === undefined ? { tunnelPort: edge.tunnelPort } : { tunnelPort: edge.tunnelPort, httpPort: edge.httpPort };
  log.info(`tuna edge: tunnel listener on port ${edge.tunnelPort}${edge.httpPort === undefined ? '' : `, public HTTP on port ${edge.httpPort}`}`, ports);
  const signal = await io.stopSignal;
  log.notice(`${signal}: draining the edge`, { signal });
  await edge.close();
  return 0;
}
