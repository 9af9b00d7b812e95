/**
 * The process-wide start-up steps of the `tuna` command, taken before any command is imported
 * (the first byte through a fresh `tuna http` is mostly the process starting). They
 * change nothing a command does; docs/tunnel-performance.md §11 has the figures (V8's compile
 * cache, `module.enableCompileCache()`, was measured there too and gained nothing).
 */

/** UNDICI_GETTERS are node:http's exports that load undici, Node's fetch implementation, when read. */
const UNDICI_GETTERS = ['WebSocket', 'CloseEvent', 'MessageEvent'] as const;

/**
 * keepUndiciLazy stops the first `import { … } from 'node:http'` from loading undici. Node 24's
 * node:http has three enumerable getters that load it (WebSocket, CloseEvent, MessageEvent), and
 * building the ESM namespace of a built-in reads every enumerable export: about 70 ms of CPU at
 * each start for three classes nothing of tuna takes from node:http (the global WebSocket is
 * separate and stays lazy). Made non-enumerable, they are still properties of the module, just
 * not named exports of its ESM namespace. It must run before any module importing node:http is
 * linked; once that namespace exists it changes nothing.
 */
export function keepUndiciLazy(): void {
  const http = process.getBuiltinModule('node:http') as Record<string, unknown>;
  for (const name of UNDICI_GETTERS) {
    const descriptor = Object.getOwnPropertyDescriptor(http, name);
    if (descriptor?.get !== undefined && descriptor.enumerable === true && descriptor.configurable === true) Object.defineProperty(http, name, { enumerable: false });
  }
}
