import 'reflect-metadata';
import { pathToFileURL } from 'node:url';
import { processIo, userDirectory } from './io.js';
import { createLogger, peekLogFormat } from './log.js';
import type { CliIo } from './io.js';
import type { CliRuntime } from './runtime.js';
import { explainError } from './explain.js';
import { packageVersion } from './version.js';
import { keepUndiciLazy } from './startup.js';

/** Command is one `tuna <command>`. */
type Command = (args: string[], io: CliIo, runtime: CliRuntime) => Promise<number>;

/**
 * Each command is imported when it runs, with what it uses: the Kubernetes client (`operator`), the
 * store drivers and ACME (`edge`) are not loaded by `tuna http` (importing them all
 * made every process 140 MiB and most of the first byte through a fresh tunnel).
 */
const commands: Record<string, (args: string[]) => Promise<Command>> = {
  http: async () => (await import('./commands/http.js')).httpCommand,
  tcp: async () => (await import('./commands/tcp.js')).tcpCommand,
  udp: async () => (await import('./commands/udp.js')).udpCommand,
  run: async () => (await import('./commands/run.js')).runCommand,
  operator: async () => (await import('./commands/operator.js')).operatorCommand,
  // `tuna edge init` works on the edge's store, `tuna edge key` mints a config-mode key; the rest runs the edge.
  edge: async (args) => {
    if (args[0] === 'init') {
      const { edgeInitCommand } = await import('./commands/edge-init.js');
      return (rest, io) => edgeInitCommand(rest.slice(1), io);
    }
    if (args[0] === 'key') {
      const { edgeKeyCommand } = await import('./commands/edge-key.js');
      return (rest, io) => edgeKeyCommand(rest.slice(1), io);
    }
    return (await import('./commands/edge.js')).edgeCommand;
  },
  demo: async () => (await import('./commands/demo.js')).demoCommand,
  accounts: async () => (await import('./commands/accounts.js')).accountsCommand,
  keys: async () => (await import('./commands/keys.js')).keysCommand,
  reserve: async () => (await import('./commands/reserve.js')).reserveCommand,
  release: async () => (await import('./commands/release.js')).releaseCommand,
  status: async () => (await import('./commands/status.js')).statusCommand,
};

/** LONG_RUNNING are the commands that take --log-format; their failures follow it. */
const LONG_RUNNING = new Set(['http', 'tcp', 'udp', 'run', 'operator', 'edge', 'demo']);

/**
 * runCli runs one command line and returns the exit status. Failures the user can act on are
 * printed as one line (`tuna: …`) without a stack trace; anything else is a bug and shows it.
 */
export async function runCli(argv: string[], io: CliIo, runtime?: () => CliRuntime): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    const { commandHelp, mainHelp } = await import('./help.js');
    const topic = name === 'help' ? args[0] : undefined;
    io.out(topic !== undefined && commandHelp[topic] !== undefined ? commandHelp[topic] : mainHelp);
    return 0;
  }
  if (name === '--version') return (io.out(`tuna ${packageVersion()}`), 0);
  const loadCommand = Object.hasOwn(commands, name) ? commands[name] : undefined;
  if (!loadCommand) {
    io.err(`tuna: unknown command ${JSON.stringify(name)}\n\n${(await import('./help.js')).mainHelp}`);
    return 2;
  }
  const isLogged = LONG_RUNNING.has(name) && !(name === 'edge' && (args[0] === 'init' || args[0] === 'key'));
  const log = createLogger(io, isLogged ? peekLogFormat(args, io.env) : 'text');
  try {
    const command = await loadCommand(args);
    // The composition root loads with the command, as everything that may throw a CliError does.
    const createRuntime = runtime ?? (await import('./container.js')).createRuntime;
    return await command(args, io, createRuntime());
  } catch (err) {
    const explained = explainError(err);
    if (explained) {
      log.error(`tuna ${name}: ${explained.message}`, { exitCode: explained.exitCode });
      return explained.exitCode;
    }
    // A control API failure (src/control-api) ends the command through the CLI's one table of exits.
    // Both are imported the way the commands and the composition root are, and on failure only:
    // the control API's codecs are not needed to run `tuna http`, and a loader that gives static
    // imports a module copy of their own (tsx under mocha compiles them to CommonJS) would make
    // `instanceof` miss the errors of the code that threw them.
    const [{ CliError }, { controlCliError }] = await Promise.all([import('./errors.js'), import('./control-errors.js')]);
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
  // before any command is imported: main.ts itself imports no module that imports node:http
  keepUndiciLazy();
  // Relative paths are the user's: `npm run tuna` starts in the package root (INIT_CWD is where the user ran it).
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
