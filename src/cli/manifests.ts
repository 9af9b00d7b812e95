import { watch } from 'node:fs';
import type { FSWatcher } from 'node:fs';
import { readFile, readdir, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { ManifestError } from './errors.js';

/**
 * The file provider's reading side: Kubernetes objects from YAML/JSON files instead of an API
 * server, for the agent's translateObjects (src/agent), the same pipeline as the operator's;
 * EndpointSlices in the files say where Services live, and `kubernetes.io/tls` Secrets give
 * in-cluster TLS its key material (which never reaches the translators or the graph).
 */

const manifestExtensions = new Set(['.yaml', '.yml', '.json']);

/** loadManifestObjects reads every manifest file under the folders (recursively, sorted by path). */
export async function loadManifestObjects(dirs: readonly string[]): Promise<unknown[]> {
  const objects: unknown[] = [];
  for (const dir of dirs) {
    for (const file of await listManifestFiles(dir)) objects.push(...(await parseManifestFile(file)));
  }
  return objects;
}

async function listManifestFiles(dir: string): Promise<string[]> {
  let entries: string[];
  try {
    if (!(await stat(dir)).isDirectory()) throw new ManifestError(`--manifests ${dir} is not a folder`);
    entries = await readdir(dir, { recursive: true });
  } catch (err) {
    if (err instanceof ManifestError) throw err;
    throw new ManifestError(`cannot read manifests folder ${dir}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { cause: err });
  }
  return entries
    .filter((e) => manifestExtensions.has(extname(e)) && !e.split('/').some((part) => part.startsWith('.')))
    .sort()
    .map((e) => join(dir, e));
}

/** parseManifestFile parses every document of a file; a `kind: List` contributes its items. */
export async function parseManifestFile(file: string): Promise<unknown[]> {
  const text = await readFile(file, 'utf8');
  const out: unknown[] = [];
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length > 0) {
      const e = doc.errors[0]!;
      const line = e.linePos?.[0]?.line;
      throw new ManifestError(`${file}${line === undefined ? '' : `:${line}`}: ${e.message.split('\n')[0]}`);
    }
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) continue;
    const list = value as { kind?: string; items?: unknown[] };
    if (typeof list.kind === 'string' && list.kind.endsWith('List') && Array.isArray(list.items)) out.push(...list.items);
    else out.push(value);
  }
  return out;
}

/**
 * ManifestWatcher calls `onChange` once the folders have been quiet for `debounceMs` after a
 * change (editors write a file in several steps; one reload per save is enough).
 */
export class ManifestWatcher {
  private readonly watchers: FSWatcher[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly dirs: readonly string[],
    private readonly onChange: () => void,
    private readonly debounceMs = 200,
  ) {}

  /** start begins watching (recursively). */
  start(): void {
    for (const dir of this.dirs) {
      const w = watch(dir, { recursive: true, persistent: false }, () => this.schedule());
      w.on('error', () => undefined);
      this.watchers.push(w);
    }
  }

  private schedule(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.onChange();
    }, this.debounceMs);
  }

  /** close stops watching. */
  close(): void {
    if (this.timer) clearTimeout(this.timer);
    for (const w of this.watchers) w.close();
    this.watchers.length = 0;
  }
}
