import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { childEnv } from './crane.js';

/** Helm (built by hack/helm.sh into the cache) for the chart tests: lint and template charts/tuna. */

const run = promisify(execFile);

/** CHART is charts/tuna of this checkout. */
export const CHART = fileURLToPath(new URL('../../charts/tuna', import.meta.url));

/** EDGE_CHART is charts/tuna-edge of this checkout. */
export const EDGE_CHART = fileURLToPath(new URL('../../charts/tuna-edge', import.meta.url));

/** ensureHelm builds Helm when the cache lacks it (minutes, once) and returns its path. */
export async function ensureHelm(): Promise<string> {
  const { stdout } = await run(fileURLToPath(new URL('../../hack/helm.sh', import.meta.url)), [], { timeout: 590_000, env: childEnv() });
  const bin = /^TUNA_HELM_BIN=(.+)$/m.exec(stdout)?.[1];
  if (bin === undefined) throw new Error(`hack/helm.sh printed no TUNA_HELM_BIN: ${stdout}`);
  return bin;
}

/** KubeObject is one rendered manifest, as loosely typed as YAML gives it. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}

/** parseManifests reads a multi-document YAML stream, dropping empty documents. */
export function parseManifests(text: string): KubeObject[] {
  const docs = parseAllDocuments(text);
  for (const d of docs) if (d.errors.length > 0) throw new Error(`rendered YAML does not parse: ${d.errors[0]!.message}`);
  return docs.map((d) => d.toJS() as KubeObject | null).filter((d): d is KubeObject => d !== null);
}

/** setFlags turns values into --set-string (strings) and --set (numbers, booleans) flags. */
export function setFlags(set: Record<string, string | number | boolean>): string[] {
  return Object.entries(set).flatMap(([k, v]) => [typeof v === 'string' ? '--set-string' : '--set', `${k}=${v}`]);
}

/** helmTemplate renders charts/tuna as release `tuna` in `namespace` with values and extra flags. */
export async function helmTemplate(helm: string, set: Record<string, string | number | boolean>, extra: string[] = [], namespace = 'tuna-system'): Promise<KubeObject[]> {
  const args = ['template', 'tuna', CHART, '--namespace', namespace, ...setFlags(set), ...extra];
  const { stdout } = await run(helm, args, { timeout: 60_000, maxBuffer: 16 * 1024 * 1024 });
  return parseManifests(stdout);
}

/** helmFails runs helm and returns its error output, failing when helm succeeds. */
export async function helmFails(helm: string, args: string[]): Promise<string> {
  try {
    await run(helm, args, { timeout: 60_000 });
  } catch (err) {
    return String((err as { stderr?: string }).stderr ?? err);
  }
  throw new Error(`helm ${args.join(' ')} succeeded`);
}

/** runHelm runs one helm command and returns its stdout. */
export async function runHelm(helm: string, args: string[]): Promise<string> {
  return (await run(helm, args, { timeout: 120_000, maxBuffer: 16 * 1024 * 1024 })).stdout;
}
