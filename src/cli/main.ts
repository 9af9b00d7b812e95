import 'reflect-metadata';
import { pathToFileURL } from 'node:url';
import { createRuntime } from './container.js';
import { controlCliError } from './control-errors.js';
import { CliError } from './errors.js';
import { commandHelp, mainHelp } from './help.js';
import { processIo, userDirectory } from './io.js';
import { createLogger, peekLogFormat } from './log.js';
import type { CliIo } from './io.js';
import type { CliRuntime } from './runtime.js';
import { accountsCommand } from './commands/accounts.js';
import { demoCommand } from './commands/demo.js';
import { edgeCommand } from './commands/edge.js';
import { edgeInitCommand } from './commands/edge-init.js';
import { edgeKeyCommand } from './commands/edge-key.js';
import { keysCommand } from './commands/keys.js';
import { releaseCommand } from './commands/release.js';
import { reserveCommand } from './commands/reserve.js';
import { httpCommand } from './commands/http.js';
import { operatorCommand } from './commands/operator.js';
import { runCommand } from './commands/run.js';
import { tcpCommand } from './commands/tcp.js';
import { explainError } from './explain.js';
import { packageVersion } from './version.js';

/** Command is one `tuna <command>`. */
type Command = (args: string[], io: CliIo, runtime: CliRuntime) => Promise<number>;

const commands: Record<string, Command> = {
  http: httpCommand,
  tcp: tcpCommand,
  run: runCommand,
  operator: operatorCommand,
  // `tuna edge init` works on the edge's store, `tuna edge key` mints a config-mode key; the rest runs the edge.
  edge: (args, io, runtime) =>
    args[0] === 'init' ? edgeInitCommand(args.slice(1), io) : args[0] === 'key' ? edgeKeyCommand(args.slice(1), io) : edgeCommand(args, io, runtime),
  demo: demoCommand,
  accounts: accountsCommand,
  keys: keysCommand,
  reserve: reserveCommand,
  release: releaseCommand,
};

/** LONG_RUNNING are the commands that take --log-format; their failures follow it. */
const LONG_RUNNING = new Set(['http', 'tcp', 'run', 'operator', 'edge', 'demo']);

/**
 * runCli runs one command line and returns the exit status. Failures the user can act on are
 * printed as one line (`tuna: …`) without a stack trace; anything else is a bug and shows it.
 */
export async function runCli(argv: string[], io: CliIo, runtime: () => CliRuntime = createRuntime): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    const topic = name === 'help' ? args[0] : undefined;
    io.out(topic !== undefined && commandHelp[topic] !== undefined ? commandHelp[topic] : mainHelp);
    return 0;
  }
  if (name === '--version') return (io.out(`tuna ${packageVersion()}`), 0);
  const command = commands[name];
  if (!command) {
    io.err(`tuna: unknown command ${JSON.stringify(name)}\n\n${mainHelp}`);
    return 2;
  }
  const isLogged = LONG_RUNNING.has(name) && !(name === 'edge' && (args[0] === 'init' || args[0] === 'key'));
  const log = createLogger(io, isLogged ? peekLogFormat(args, io.env) : 'text');
  try {
    return await command(args, io, runtime());
  } catch (err) {
    const explained = explainError(err);
    if (explained) {
      log.error(`tuna ${name}: ${explained.message}`, { exitCode: explained.exitCode });
      return explained.exitCode;
    }
    // A control API failure (src/control-api) ends the command through the CLI's one table of exits.
    const failure = err instanceof CliError ? err : controlCliError(err);
    if (failure) {
      log.error(failure.message.startsWith('tuna') ? failure.message : `tuna ${name}: ${failure.message}`, { exitCode: failure.exitCode, code: failure.code });
      return failure.exitCode;
    }
    log.error(`tuna ${name}: unexpected error (a bug; please report it):\n${err instanceof Error ? (err.stack ?? err.message) : String(err)}`, { exitCode: 70 });
    return 70;
  }
}

/**
 * runMain runs the command line in this process with the real terminal and sets the exit status;
 * bin/tuna.js and direct execution (node src/cli/main.ts) both come here.
 */
export function runMain(argv: string[]): void {
  // Relative paths are the user's: `npm run tuna` starts in the package root (issue 9).
  const dir = userDirectory(process.env, process.cwd());
  if (dir !== process.cwd()) process.chdir(dir);
  runCli(argv, processIo()).then(
    (code) => {
      process.exitCode = code;
      // Servers and tunnels are closed by now; a stray timer must not keep a stopped CLI alive.
      setTimeout(() => process.exit(code), 2_000).unref();
    },
    (err: unknown) => {
      console.error(err);
      process.exit(70);
    },
  );
}

// Run when executed directly (node src/cli/main.ts), not when imported (tests, bin/tuna.js).
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) runMain(process.argv.slice(2));
