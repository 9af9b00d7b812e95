import { expect } from 'chai';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { CodedError as StaticCodedError } from '../../src/model/index.js';

// Every error class a module of src exports (every room's index.ts and second entry, the CLI's
// files, and the internals behind them) is one failure with a stable code (STYLE.md "Errors",
// the undici convention): a CodedError, a code of the form TUNA_…, and a class name no other
// error class of src has, so a log's `name` and `code` say which failure it was.

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

/** the modules the walk imports: every .ts file of src (an index re-exports only part of its room) */
const MODULES = readdirSync(SRC, { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
  .sort();

/**
 * PROBE is what each error class is built with to read its code: (code, message) for the bases
 * that take a code, a message (or a "what") for the rest. A class whose constructor needs other
 * arguments gets its own row in ARGUMENTS.
 */
const PROBE = ['TUNA_PROBE_CODE', 'probe message'];
const ARGUMENTS: Record<string, unknown[]> = {
  ControlMethodNotAllowedError: [['GET']],
  ControlConflictError: ['probe message'],
  ControlServerError: [500, 'TUNA_CONTROL_INTERNAL', 'probe message'],
  AcmeUnsupportedChallengeError: ['example.com', ['tls-alpn-01']],
  StoreCorruptRowError: ['accounts', ['name: not a string']],
  BindingsFailedError: [[{ binding: { id: 'b', hostnames: [] }, origin: 'the default key', err: new Error('refused') }], 1],
  KeysNotPersistedError: [['default/web: forbidden']],
  InvalidGraphError: [['duplicate id binding/host/a.example.com']],
  SecretReadError: [{ namespace: 'default', name: 'tls' }, new Error('forbidden')],
  SubjectAltNameError: [[{ type: 'Hostname', value: 'backend.example.com' }]],
};

type ErrorClass = new (...args: unknown[]) => Error;

interface Found {
  readonly type: ErrorClass;
  readonly modules: string[];
}

/** load imports one module of src by the .js name the sources import it by, so each module loads once. */
async function load(file: string): Promise<Record<string, unknown>> {
  return (await import(new URL(file.replace(/\.ts$/, '.js'), new URL('../../src/', import.meta.url)).href)) as Record<string, unknown>;
}

// The walk's imports and mocha's loading of this file may give two instances of a module; the
// CodedError every check uses is the walk's.
let CodedError: typeof StaticCodedError;

/** exportedErrorClasses imports every module and keeps each distinct exported subclass of Error, with where it was found. */
async function exportedErrorClasses(): Promise<Found[]> {
  const found = new Map<ErrorClass, Found>();
  for (const file of MODULES) {
    const mod = await load(file);
    for (const value of Object.values(mod)) {
      if (typeof value !== 'function' || !(value.prototype instanceof Error)) continue;
      const type = value as ErrorClass;
      const entry = found.get(type) ?? { type, modules: [] };
      entry.modules.push(file);
      found.set(type, entry);
    }
  }
  return [...found.values()];
}

/** problemsOf lists what is wrong with a set of error classes (empty when every one is a unique, coded CodedError). */
function problemsOf(classes: readonly Found[]): string[] {
  const problems: string[] = [];
  const byName = new Map<string, Found[]>();
  for (const c of classes) byName.set(c.type.name, [...(byName.get(c.type.name) ?? []), c]);
  for (const [name, same] of byName) {
    if (same.length > 1) problems.push(`${name} names ${same.length} classes (${same.map((s) => s.modules[0]).join(', ')})`);
  }
  for (const { type, modules } of classes) {
    let err: Error;
    try {
      err = Reflect.construct(type, ARGUMENTS[type.name] ?? PROBE) as Error;
    } catch (cause) {
      problems.push(`${type.name} (${modules[0]}) cannot be built to read its code; give it a row in ARGUMENTS: ${String(cause)}`);
      continue;
    }
    if (!(err instanceof CodedError)) problems.push(`${type.name} (${modules[0]}) is not a CodedError`);
    const code = (err as { code?: unknown }).code;
    if (typeof code !== 'string' || !/^TUNA_[A-Z_]+$/.test(code)) problems.push(`${type.name} (${modules[0]}) has code ${String(code)}, not TUNA_[A-Z_]+`);
    if (err.name !== type.name) problems.push(`${type.name} (${modules[0]}) reports the name ${err.name}`);
  }
  return problems;
}

describe('the error classes of src', function () {
  // importing every module of src once (the Kubernetes client, the store drivers, ACME …)
  this.timeout(60_000);
  let classes: Found[];

  before(async () => {
    CodedError = (await load('model/index.ts')).CodedError as typeof StaticCodedError;
    classes = await exportedErrorClasses();
  });

  it('finds the error classes of every room that has them', () => {
    const names = new Set(classes.map((c) => c.type.name));
    for (const name of ['CodedError', 'TunnelClosedError', 'EdgeConfigError', 'NoReadyEndpointError', 'StreamGoneError', 'ControlUnreachableError', 'StoreConflictError', 'AcmeTimeoutError', 'InspectorListenError', 'CacheNotSyncedError', 'UsageError', 'BindingsFailedError']) {
      expect(names, name).to.include(name);
    }
  });

  it('gives every exported error class a unique name, a TUNA_ code, and CodedError as its base', () => {
    expect(problemsOf(classes)).to.deep.equal([]);
  });

  it('reports a second class of an existing name, and an error class without a code', () => {
    class TunnelClosedError extends CodedError {}
    class UncodedError extends Error {}
    class LooseCodeError extends Error {
      readonly code = 'TUNA_LOOSE';
    }
    const extra = [TunnelClosedError, UncodedError, LooseCodeError].map((type) => ({ type: type as ErrorClass, modules: ['test'] }));
    expect(problemsOf([...classes, ...extra])).to.deep.equal([
      'TunnelClosedError names 2 classes (tunnel/errors.ts, test)',
      'UncodedError (test) is not a CodedError',
      'UncodedError (test) has code undefined, not TUNA_[A-Z_]+',
      'UncodedError (test) reports the name Error',
      'LooseCodeError (test) is not a CodedError',
      'LooseCodeError (test) reports the name Error',
    ]);
  });
});
