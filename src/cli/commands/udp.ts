import * as t from 'io-ts';
import { StaticEndpointResolver } from '../../dataplane/index.js';
import { agentFlagOptions, resolveAgentOptions } from '../agent-options.js';
import { UsageError } from '../errors.js';
import { MillisecondsString, PortOrZeroString, PortString, decodeFlags, parseFlags } from '../flags.js';
import { commandHelp } from '../help.js';
import type { CliIo } from '../io.js';
import { createLogger, logFlagOptions, resolveLogFormat } from '../log.js';
import { udpTarget } from '../quick-graph.js';
import type { CliRuntime } from '../runtime.js';
import { pick } from './http.js';
import { serveUntilStopped } from './serve.js';

const options = { ...agentFlagOptions, ...logFlagOptions, 'remote-port': { type: 'string' }, binding: { type: 'string' }, 'idle-timeout': { type: 'string' } } as const;

const UdpFlags = t.intersection([t.type({ port: PortString }), t.partial({ 'remote-port': PortOrZeroString, binding: t.string, 'idle-timeout': MillisecondsString })]);

/** STORE_PORT_BINDING is a store-mode port binding id: its port is the public one (docs/protocol.md "Binding ids"). */
const STORE_PORT_BINDING = /^binding\/tcp-port\/(\d{1,5})$/;

/**
 * udpCommand is `tuna udp <port>`: datagrams to a UDP port of the edge reach 127.0.0.1:<port>,
 * one flow per public client address:port (docs/protocol.md §4.6). Nothing is probed first: a
 * UDP port cannot be asked whether something listens without sending it a datagram.
 */
export async function udpCommand(args: string[], io: CliIo, runtime: CliRuntime): Promise<number> {
  const parsed = parseFlags(args, options, 'udp');
  if (parsed.values.help === true) return (io.out(commandHelp.udp!), 0);
  if (parsed.positionals.length !== 1) throw new UsageError('tuna udp: exactly one <port> expected (see tuna udp --help)');
  const flags = decodeFlags(UdpFlags, { ...pick(parsed.values, ['remote-port', 'binding', 'idle-timeout']), port: parsed.positionals[0] }, 'udp');
  const log = createLogger(io, resolveLogFormat(parsed.values, io.env, 'udp'));
  const agentOptions = await resolveAgentOptions(pick(parsed.values, Object.keys(agentFlagOptions)), io.env, 'udp');
  const quick = udpTarget({ address: '127.0.0.1', port: flags.port }, flags['remote-port'] ?? 0, flags.binding);
  const endpoints = new StaticEndpointResolver();
  endpoints.set(quick.service.namespace, quick.service.name, quick.service.portName, [quick.service.endpoint]);
  const withIdle = flags['idle-timeout'] === undefined ? agentOptions : { ...agentOptions, udpIdleTimeoutMs: flags['idle-timeout'] };
  const agent = runtime.createAgent(withIdle, endpoints, undefined, (line) => log.warn(line));
  const bindingId = quick.graph.bindings[0]!.id;
  return serveUntilStopped(agent, quick.graph, io, log, [`Forwarding edge UDP binding ${bindingId} → 127.0.0.1:${flags.port}`, publicAddressLine(agentOptions.edge.host, bindingId, flags['remote-port'] ?? 0)]);
}

/**
 * publicAddressLine names the public address when the agent can know it: the port asked for, or
 * the one a store-mode binding id carries; otherwise it says where to look (a config-mode edge
 * chooses the port and does not tell the agent).
 */
export function publicAddressLine(edgeHost: string, bindingId: string, remotePort: number): string {
  const port = remotePort !== 0 ? remotePort : Number(STORE_PORT_BINDING.exec(bindingId)?.[1] ?? 0);
  const host = edgeHost.includes(':') ? `[${edgeHost}]` : edgeHost;
  return port !== 0 ? `Public address: udp://${host}:${port}` : `Public address: the UDP port the edge opened for ${bindingId} (its config or tuna reserve list)`;
}
