import * as t from 'io-ts';
import { printTokenWarning } from '../control-output.js';
import { mintConfigModeKey } from '../edge-flags.js';
import { UsageError } from '../errors.js';
import { decodeFlags, parseFlags } from '../flags.js';
import type { CliIo } from '../io.js';

const options = { host: { type: 'string' }, json: { type: 'boolean' } } as const;

const KeyFlags = t.partial({ host: t.string, json: t.boolean });

/** edgeKeyHelp documents `tuna edge key`. */
export const edgeKeyHelp = `Usage: tuna edge key [--host HOST] [--json]

Mint a tunnel key for a config-mode edge (an edge run with --config or --bind, not --store): print
the key once, its SHA-256 digest, and the two ways to give the digest to the edge: the
--bind flag of tuna edge, and the bindings line of a config file. The edge keeps only the digest.

Options:
  --host HOST        the hostname the key publishes (default app.localhost)
  --json             print {key, sha256, bind, binding} as JSON`;

/** edgeKeyCommand is `tuna edge key`: no edge or store is touched; the key exists only in its output. */
export async function edgeKeyCommand(args: string[], io: CliIo): Promise<number> {
  const parsed = parseFlags(args, options, 'edge key');
  if (parsed.values.help === true) return (io.out(edgeKeyHelp), 0);
  if (parsed.positionals.length > 0) throw new UsageError(`tuna edge key: unexpected argument ${JSON.stringify(parsed.positionals[0])}`);
  const flags = decodeFlags(KeyFlags, { host: parsed.values.host, json: parsed.values.json }, 'edge key');
  const host = (flags.host ?? 'app.localhost').toLowerCase();
  if (!/^(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(host)) throw new UsageError(`tuna edge key: --host ${JSON.stringify(host)} is not a hostname`);
  const { key, sha256 } = mintConfigModeKey();
  const bind = `--bind ${host}=${sha256}`;
  const binding = `- {id: binding/host/${host}, kind: host, hostnames: ["${host}"], keys: [{sha256: ${sha256}}]}`;
  if (flags.json === true) io.out(JSON.stringify({ key, sha256, bind, binding }, null, 2));
  else {
    io.out(key);
    io.out('');
    io.out(`sha256: ${sha256}`);
    io.out(`edge flag:    tuna edge … ${bind}`);
    io.out(`config file:  bindings:\n                ${binding}`);
    io.out(`agent:        tuna http PORT --host ${host} --edge … --key <the key above>`);
  }
  printTokenWarning(io);
  return Promise.resolve(0);
}
