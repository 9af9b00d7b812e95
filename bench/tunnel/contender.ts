/**
 * Contender: one way of carrying a client's requests to the backend (direct, nginx, frp, chisel,
 * tuna). The orchestrator starts every contender once, then measures them side by side.
 */
import type { Target } from './net.js';
import type { ProcessGroup } from './processes.js';
import type { BenchTools } from './tools.js';

/** BenchContext is what every contender gets: the tools, the process group, a temp dir, the backend. */
export interface BenchContext {
  tools: BenchTools;
  group: ProcessGroup;
  /** a fresh directory under os.tmpdir(), removed at the end of the run */
  tmp: string;
  /** the backend's port on 127.0.0.1 */
  backendPort: number;
  /** upper bound on the life of any process started for the run */
  lifetimeMs: number;
}

/** MemoryFigure is the resident memory of a contender's processes with 1 and with n idle tunnels. */
export interface MemoryFigure {
  tunnels: number;
  /** summed VmRSS of the server and client processes, bytes, with one tunnel */
  rssOne: number;
  /** the same with `tunnels` tunnels open and idle */
  rssMany: number;
  /** how the tunnels are carried (for the table's note) */
  note: string;
}

/** Contender is one system under test; optional figures apply only to tunnels. */
export interface Contender {
  name: string;
  /** one line on how it is set up, for the method section */
  describe(): string;
  /** start brings it up and resolves with where clients send requests */
  start(ctx: BenchContext): Promise<Target>;
  /**
   * firstByte starts a fresh tunnel (a new client process against the running server) and resolves
   * with the milliseconds from spawning it to the first byte of a response through it.
   */
  firstByte?(ctx: BenchContext, attempt: number): Promise<number>;
  /** idleMemory measures server + client RSS with 1 and with `tunnels` open idle tunnels */
  idleMemory?(ctx: BenchContext, tunnels: number): Promise<MemoryFigure>;
  /** stop ends its processes */
  stop(ctx: BenchContext): Promise<void>;
}

/** ContenderUnavailableError says a contender cannot run on this machine now, and why. */
export class ContenderUnavailableError extends Error {
  readonly code = 'TUNA_BENCH_CONTENDER_UNAVAILABLE';
  constructor(
    readonly contender: string,
    readonly reason: string,
  ) {
    super(`${contender}: not available (${reason})`);
    this.name = 'ContenderUnavailableError';
  }
}
