import { readFile } from 'node:fs/promises';
import * as t from 'io-ts';
import type { Binding } from '../model/index.js';
import { UsageError } from './errors.js';

/**
 * Keys per binding for an agent that publishes several (docs/security.md, "Hostile agent"): a store-mode tunnel
 * key opens one reservation only, so `tuna run --manifests` over three hosts needs three keys, or
 * one account key with the `tunnels` scope. `--keys FILE` maps a hostname or a binding id to its
 * key (YAML or JSON), e.g.
 *
 *     app.tuna.example: tuna_tk_…
 *     binding/tcp-port/20022: tuna_tk_…
 *
 * A binding found in neither the file nor (for the rest) `--key` is a usage error naming it.
 */

/** BindingKeys maps a hostname or a binding id to a key. */
export type BindingKeys = ReadonlyMap<string, string>;

const KeysFile = t.record(t.string, t.string);

/** loadBindingKeys reads a `--keys` file; a malformed one is a usage error naming the entry. */
export async function loadBindingKeys(path: string): Promise<BindingKeys> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new UsageError(`--keys ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  // The YAML parser loads with the first keys file: `tuna http` never reads one, and stays a lean process.
  // `default` (module.exports of this CommonJS package): a bundle's lazy chunk of a CommonJS
  // package exports only that, not the named exports Node's own import finds (hack/bundle.js)
  const { parse } = (await import('yaml')).default;
  let value: unknown;
  try {
    value = parse(text);
  } catch (err) {
    throw new UsageError(`--keys ${path}: not YAML or JSON: ${(err as Error).message.split('\n')[0]}`);
  }
  if (!KeysFile.is(value)) throw new UsageError(`--keys ${path}: expected a map of hostname or binding id to key (name: key)`);
  const keys = new Map<string, string>();
  for (const [name, key] of Object.entries(value)) {
    if (key.trim() === '') throw new UsageError(`--keys ${path}: the key of ${JSON.stringify(name)} is empty`);
    keys.set(name.toLowerCase(), key.trim());
  }
  return keys;
}

/** KeyChoice is which key a binding is opened with, and how to name it in a message (never the key). */
export interface KeyChoice {
  /** the key source's reference */
  keyRef: string;
  /** `--key` or `--keys entry app.example.com` */
  origin: string;
}

/** KEYS_ENTRY_PREFIX prefixes the key reference of a `--keys` entry. */
export const KEYS_ENTRY_PREFIX = 'keys:';

/**
 * chooseKey picks a binding's key: the `--keys` entry of its id, else of one of its hostnames,
 * else the default key (`--key`, `$TUNA_KEY`) under `defaultRef`. Undefined when there is none.
 */
export function chooseKey(binding: Pick<Binding, 'id' | 'hostnames'>, keys: BindingKeys, defaultRef: string | undefined): KeyChoice | undefined {
  const entry = [binding.id, ...binding.hostnames].map((n) => n.toLowerCase()).find((n) => keys.has(n));
  if (entry !== undefined) return { keyRef: `${KEYS_ENTRY_PREFIX}${entry}`, origin: `--keys entry ${entry}` };
  return defaultRef === undefined ? undefined : { keyRef: defaultRef, origin: '--key' };
}

/** keyReferences lists every key reference the key source must resolve. */
export function keyReferences(keys: BindingKeys, defaultRef: string | undefined, defaultKey: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  if (defaultRef !== undefined && defaultKey !== undefined) out.set(defaultRef, defaultKey);
  for (const [name, key] of keys) out.set(`${KEYS_ENTRY_PREFIX}${name}`, key);
  return out;
}
