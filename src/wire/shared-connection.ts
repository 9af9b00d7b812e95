/**
 * Protocol version 2, the shared connection (docs/protocol.md §9): one agent
 * connection per edge node carries every binding the agent serves. The upgrade names no binding
 * and carries no key; after HTTP/2 is up the edge opens one control stream, on which the agent
 * attaches each binding with that binding's own key and the edge answers per binding. Every
 * public stream then names its binding in the `tuna-binding` header.
 */

import { WireError } from './errors.js';

/** SHARED_UPGRADE_TOKEN is the `Upgrade` token of protocol version 2 (many bindings, one connection). */
export const SHARED_UPGRADE_TOKEN = 'tuna-tunnel/2';

/** CONTROL_PATH is the `:path` of the control stream the edge opens on a shared connection. */
export const CONTROL_PATH = '/.tuna/v2/control';

/** MAX_CONTROL_LINE_BYTES bounds one control message (a binding id and a key fit many times over). */
export const MAX_CONTROL_LINE_BYTES = 16 << 10;

/** AgentControlMessage is what the agent sends on the control stream. */
export type AgentControlMessage =
  | { type: 'attach'; binding: string; key: string }
  | { type: 'detach'; binding: string };

/** EdgeControlMessage is what the edge sends on the control stream. */
export type EdgeControlMessage =
  | { type: 'attached'; binding: string }
  | { type: 'refused'; binding: string; status: number; reason: string }
  | { type: 'detached'; binding: string; reason: string };

/** encodeControlMessage renders one message as a line of JSON (newline-delimited). */
export function encodeControlMessage(message: AgentControlMessage | EdgeControlMessage): string {
  return `${JSON.stringify(message)}\n`;
}

/** ControlLineError: a control message was too long, not JSON, or not one of the known messages. */
export class ControlLineError extends WireError {
  constructor(message: string) {
    super('TUNA_CONTROL_MALFORMED', `malformed control message: ${message}`);
  }
}

/**
 * ControlLineReader splits a control stream into lines and parses each with `parse`; a line over
 * MAX_CONTROL_LINE_BYTES or one `parse` rejects throws ControlLineError (the connection is then
 * torn down: only a broken peer sends that).
 */
export class ControlLineReader<T> {
  #pending = '';
  readonly #parse: (value: unknown) => T | undefined;

  constructor(parse: (value: unknown) => T | undefined) {
    this.#parse = parse;
  }

  /** push adds a chunk and returns the complete messages in it. */
  push(chunk: Buffer | string): T[] {
    this.#pending += typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    const out: T[] = [];
    let end = this.#pending.indexOf('\n');
    while (end >= 0) {
      const line = this.#pending.slice(0, end);
      this.#pending = this.#pending.slice(end + 1);
      if (line.trim() !== '') out.push(this.#parseLine(line));
      end = this.#pending.indexOf('\n');
    }
    if (this.#pending.length > MAX_CONTROL_LINE_BYTES) throw new ControlLineError('line too long');
    return out;
  }

  #parseLine(line: string): T {
    if (line.length > MAX_CONTROL_LINE_BYTES) throw new ControlLineError('line too long');
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw new ControlLineError('not JSON');
    }
    const message = this.#parse(value);
    if (message === undefined) throw new ControlLineError('unknown message or missing field');
    return message;
  }
}

function fieldsOf(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function isId(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= 1024;
}

/** parseAgentControlMessage accepts exactly the messages an agent may send, else undefined. */
export function parseAgentControlMessage(value: unknown): AgentControlMessage | undefined {
  const m = fieldsOf(value);
  if (m === undefined || !isId(m.binding)) return undefined;
  if (m.type === 'attach' && typeof m.key === 'string') return { type: 'attach', binding: m.binding, key: m.key };
  if (m.type === 'detach') return { type: 'detach', binding: m.binding };
  return undefined;
}

/** parseEdgeControlMessage accepts exactly the messages an edge may send, else undefined. */
export function parseEdgeControlMessage(value: unknown): EdgeControlMessage | undefined {
  const m = fieldsOf(value);
  if (m === undefined || !isId(m.binding)) return undefined;
  if (m.type === 'attached') return { type: 'attached', binding: m.binding };
  if (m.type === 'refused' && typeof m.status === 'number' && typeof m.reason === 'string') {
    return { type: 'refused', binding: m.binding, status: m.status, reason: m.reason };
  }
  if (m.type === 'detached' && typeof m.reason === 'string') return { type: 'detached', binding: m.binding, reason: m.reason };
  return undefined;
}
