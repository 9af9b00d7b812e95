import { fileURLToPath } from 'node:url';

/**
 * clusterEntry is what a worker (an edge worker, or an agent process of `tuna http --processes`) runs: the script this process was started with when it is tuna's
 * (bin/tuna.js finds dist/ or registers tsx itself; src/cli/main.ts under `--import tsx`), else
 * (tuna run inside another program, e.g. a test) src/cli/main beside this file, under tsx when it
 * is TypeScript, with the repository's tsconfig (decorators) whatever the working directory.
 */
export function clusterEntry(): { exec: string; execArgv: string[] } {
  // `--import tsx` resolves from the working directory, which `npm run tuna` changes (runMain): pin it.
  const execArgv = process.execArgv.map((a, i, all) => (a === 'tsx' && all[i - 1] === '--import' ? import.meta.resolve('tsx') : a === '--import=tsx' ? `--import=${import.meta.resolve('tsx')}` : a));
  const started = process.argv[1] ?? '';
  if (/(^|[\\/])(bin[\\/]tuna\.js|cli[\\/]main\.[jt]s)$/.test(started)) return { exec: started, execArgv };
  const isTs = fileURLToPath(import.meta.url).endsWith('.ts');
  const exec = fileURLToPath(new URL(`./main${isTs ? '.ts' : '.js'}`, import.meta.url));
  if (!isTs || execArgv.some((a) => a.includes('tsx'))) return { exec, execArgv };
  process.env.TSX_TSCONFIG_PATH ??= fileURLToPath(new URL('../../tsconfig.json', import.meta.url));
  return { exec, execArgv: [...execArgv, '--import', import.meta.resolve('tsx')] };
}
