import * as t from 'io-ts';
import { StaticEndpointResolver } from '../../dataplane/index.js';
import { agentFlagOptions, resolveAgentOptions } from '../agent-options.js';
import { UsageError } from '../errors.js';
import { PortOrZeroString, PortString, decodeFlags, parseFlags } from '../flags.js';
import { commandHelp } from '../help.js';
import type { CliIo } from '../io.js';
import { createLogger, logFlagOptions, resolveLogFormat } from '../log.js';
import { probePort } from '../port-probe.js';
import { tcpTarget } from '../quick-graph.js';
import type { CliRuntime } from '../runtime.js';
import { pick } from './http.js';
import { serveUntilStopped } from './serve.js';

const options = { ...agentFlagOptions, ...logFlagOptions, 'remote-port': { type: 'string' }, binding: { type: 'string' }, 'no-check': { type: 'boolean' } } as const;

const TcpFlags = t.intersection([t.type({ port: PortString }), t.partial({ 'remote-port': PortOrZeroString, binding: t.string, 'no-check': t.boolean })]);

/** tcpCommand is `tuna tcp <port>`. */
export async function tcpCommand(args: string[], io: CliIo, runtime: CliRuntime): Promise<number> {
  const parsed = parseFlags(args, options, 'tcp');
  if (parsed.values.help === true) return (io.out(commandHelp.tcp!), 0);
  if (parsed.positionals.length !== 1) throw new UsageError('tuna tcp: exactly one <port> expected (see tuna tcp --help)');
  const flags = decodeFlags(TcpFlags, { ...pick(parsed.values, ['remote-port', 'binding', 'no-check']), port: parsed.positionals[0] }, 'tcp');
  const log = createLogger(io, resolveLogFormat(parsed.values, io.env, 'tcp'));
  const agentOptions = await resolveAgentOptions(pick(parsed.values, Object.keys(agentFlagOptions)), io.env, 'tcp');
  if (flags['no-check'] !== true && !(await probePort('127.0.0.1', flags.port)))
    log.warn(`warning: nothing accepts connections on 127.0.0.1:${flags.port} yet; connections will be closed until something does`, { target: `127.0.0.1:${flags.port}` });
  const quick = tcpTarget({ address: '127.0.0.1', port: flags.port }, flags['remote-port'] ?? 0, flags.binding);
  const endpoints = new StaticEndpointResolver();
  endpoints.set(quick.service.namespace, quick.service.name, quick.service.portName, [quick.service.endpoint]);
  const agent = runtime.createAgent(agentOptions, endpoints, undefined, (line) => log.warn(line));
  return serveUntilStopped(agent, quick.graph, io, log, [`Forwarding edge TCP binding ${quick.graph.bindings[0]!.id} → 127.0.0.1:${flags.port}`]);
}
