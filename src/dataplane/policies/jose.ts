import type * as JoseModule from 'jose';

/** Jose is the `jose` library's module. */
export type Jose = typeof JoseModule;

let loading: Promise<Jose> | undefined;

/**
 * loadJose imports `jose` on first use: an agent without a JWT policy never loads it (some 16 MiB
 * of RSS and 60 ms of start-up on the development machine; idle memory: docs/tunnel-performance.md §7.2).
 */
export function loadJose(): Promise<Jose> {
  return (loading ??= import('jose'));
}
