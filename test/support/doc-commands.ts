import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

/**
 * Helpers that run a document's shell blocks verbatim (docs/quickstart.md): the `sh` blocks of one
 * `##` section, in order, as one bash script; its `text` blocks are output the script must print.
 */

/** DocSection is one `##` section's commands and the output it shows. */
export interface DocSection {
  /** script is the section's `sh` blocks, joined in order */
  script: string;
  /** outputs are the section's `text` blocks */
  outputs: string[];
}

/** readDocSection finds the `## <title…>` section of a Markdown file and its fenced blocks. */
export function readDocSection(file: string, titleStart: string): DocSection {
  const text = readFileSync(file, 'utf8');
  const sections = text.split(/^## /m).slice(1);
  const section = sections.find((s) => s.startsWith(titleStart));
  if (section === undefined) throw new Error(`${file} has no section "## ${titleStart}…"`);
  const script: string[] = [];
  const outputs: string[] = [];
  for (const m of section.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)) {
    if (m[1] === 'sh') script.push(m[2]!);
    else if (m[1] === 'text') outputs.push(m[2]!);
  }
  return { script: script.join('\n'), outputs };
}

/**
 * outputPattern reads a `text` block as a pattern: each line must appear in order, `…` stands for
 * any text and runs of spaces for any spacing (table columns are as wide as their cells).
 */
export function outputPattern(block: string): RegExp {
  const lines = block
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) =>
      l
        .trim()
        .split('…')
        .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/ +/g, ' +'))
        .join('.*'),
    );
  return new RegExp(lines.join('[^]*?'));
}

/** Ran is the outcome of a script. */
export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** freePort returns a loopback port that was free a moment ago. */
export async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const { port } = server.address() as AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

/**
 * userEnv is the environment of a user's shell: this process's, less tuna's and npm's variables, and
 * with PATH left without the Node 24 that hack/node24.sh put first, so the machine's own Node is
 * found as a user would find it.
 */
export function userEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TUNA_') && !k.startsWith('npm_') && k !== 'INIT_CWD'));
  env.PATH = (process.env.PATH ?? '')
    .split(delimiter)
    .filter((dir) => !/[/\\]node-linux-[a-z0-9]+[/\\]bin$/.test(dir))
    .join(delimiter);
  return { ...env, ...extra };
}

/**
 * runScript runs `script` with `bash -e` in its own process group from `cwd`, with TMPDIR set to a
 * fresh folder (removed afterwards), and kills whatever the script left running when it ends or
 * after `timeoutMs`.
 */
export async function runScript(script: string, cwd: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<Ran> {
  const scratch = mkdtempSync(join(tmpdir(), 'tuna-doc-'));
  const file = join(scratch, 'script.sh');
  writeFileSync(file, script);
  const tmp = join(scratch, 'tmp');
  mkdirSync(tmp);
  const child = spawn('bash', ['-e', file], { cwd, env: { ...env, TMPDIR: tmp }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const killGroup = (signal: NodeJS.Signals): void => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      // the group is gone
    }
  };
  const timer = setTimeout(() => killGroup('SIGKILL'), timeoutMs);
  try {
    // The script's own exit ends the walk: what it left running in the background (a failed step
    // leaves its edge and operator) is killed with the group, and only then do the pipes close.
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (c) => resolve(c));
    });
    killGroup('SIGKILL');
    await new Promise<void>((resolve) => {
      if (child.stdout.closed && child.stderr.closed) return resolve();
      const bound = setTimeout(resolve, 10_000);
      child.once('close', () => {
        clearTimeout(bound);
        resolve();
      });
    });
    return { code, stdout, stderr };
  } finally {
    clearTimeout(timer);
    killGroup('SIGKILL');
    rmSync(scratch, { recursive: true, force: true });
  }
}
