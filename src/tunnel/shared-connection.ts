import { EventEmitter } from 'node:events';
import { constants as h2constants } from 'node:http2';
import type { IncomingHttpHeaders, ServerHttp2Stream } from 'node:http2';
import { BindingAttachment } from './binding-attachment.js';
import { TunnelClosedError, TunnelProtocolError, TunnelRefusedError } from './errors.js';
import { TunnelSession, respondQuietly } from './session.js';
import type { TunnelSessionOptions } from './session.js';
import { CONTROL_PATH, ControlLineReader, HEADER_BINDING, encodeControlMessage, parseEdgeControlMessage, takeStreamMeta } from '../wire/index.js';
import type { AgentControlMessage, EdgeControlMessage, TunnelStreamHandler } from '../wire/index.js';

/** SharedConnectionOptions are a session's options without what the shared connection sets itself. */
export type SharedConnectionOptions = Omit<TunnelSessionOptions, 'bindingId' | 'key' | 'router'>;

/** BindingOnConnection is what the agent knows of one binding on the connection. */
interface BindingOnConnection {
  /** attachments serving it (two during a key rotation: the old and the new) */
  open: Set<BindingAttachment>;
  /** attachments whose `attach` awaits its answer, in the order sent (the edge answers a binding's messages in order); undefined where the asker left */
  pending: (BindingAttachment | undefined)[];
  /** the edge serves the binding here: from `attached` to `detached` (streams are routed meanwhile, also while detaching) */
  isAttachedAtEdge: boolean;
  /** the agent sent `detach` and waits for `detached` */
  isDetaching: boolean;
}

/** SharedConnectionEvents: 'close' once the connection has ended, with the error that ended it, if one did. */
export type SharedConnectionEvents = {
  close: [err: Error | undefined];
};

/**
 * SharedConnection is one agent connection that serves many bindings (protocol version 2,
 * docs/protocol.md §9): a TunnelSession upgraded without a binding, plus the control stream the
 * edge opens on it. `attach(bindingId, key)` proves one binding with its own key and returns a
 * BindingAttachment that the tunnel manager's slot treats like a one-binding session. Streams are
 * routed by their `tuna-binding` header; one for a binding not attached here is refused with
 * REFUSED_STREAM (RFC 9113 §8.7: unprocessed, the edge may retry it elsewhere). Emits 'close'
 * once the connection has ended.
 */
export class SharedConnection extends EventEmitter<SharedConnectionEvents> {
  readonly session: TunnelSession;
  readonly #handler: TunnelStreamHandler;
  readonly #bindings = new Map<string, BindingOnConnection>();
  #control: ServerHttp2Stream | undefined;
  #queued: string[] = [];
  #started = false;

  constructor(options: SharedConnectionOptions) {
    super();
    this.#handler = options.handler;
    this.session = new TunnelSession({ ...options, bindingId: '', key: '', router: this });
    this.session.on('draining', () => {
      this.#endControl();
      for (const attachment of this.#attachments()) attachment.markDraining();
    });
    this.session.once('close', (err: Error | undefined) => {
      const why = err ?? new TunnelClosedError('the shared tunnel connection closed');
      const attachments = this.#attachments();
      this.#bindings.clear();
      // the pool learns first (e.g. that the edge speaks version 1 only), then the bindings' slots.
      this.emit('close', err);
      for (const attachment of attachments) attachment.end(why);
    });
  }

  /** isUsable says whether new bindings may attach here (not draining, not closed). */
  get isUsable(): boolean {
    const { state } = this.session;
    return state === 'idle' || state === 'connecting' || state === 'open';
  }

  /** bindingCount is how many bindings are attached or attaching. */
  get bindingCount(): number {
    return this.#bindings.size;
  }

  /** serves says whether the binding is attached or attaching here. */
  serves(bindingId: string): boolean {
    return this.#bindings.has(bindingId);
  }

  /** attach asks the edge to serve a binding on this connection with its key; connect() on the result waits for the answer. */
  attach(bindingId: string, key: string): BindingAttachment {
    if (!this.#started) {
      this.#started = true;
      this.session.connect().catch(() => {
        // reported through 'close'
      });
    }
    const attachment = new BindingAttachment(this, bindingId);
    let entry = this.#bindings.get(bindingId);
    if (entry === undefined) {
      entry = { open: new Set(), pending: [], isAttachedAtEdge: false, isDetaching: false };
      this.#bindings.set(bindingId, entry);
    }
    entry.pending.push(attachment);
    this.#send({ type: 'attach', binding: bindingId, key });
    return attachment;
  }

  /**
   * release is called by an attachment that stops serving (close or destroy). When it was the
   * binding's last, the agent detaches the binding; `detached` or the connection's end settles it.
   * When the connection then serves nothing, it is closed.
   */
  release(attachment: BindingAttachment): void {
    const entry = this.#bindings.get(attachment.bindingId);
    if (entry === undefined) return;
    entry.open.delete(attachment);
    const at = entry.pending.indexOf(attachment);
    // a pending attach is still answered by the edge: keep its place in the queue, answer nobody.
    if (at >= 0) entry.pending[at] = undefined;
    this.#settle(attachment.bindingId, entry);
  }

  // A binding nobody serves any more: detach it when the edge serves it, else forget it; close
  // the connection once it serves nothing.
  #settle(bindingId: string, entry: BindingOnConnection): void {
    if (entry.open.size > 0 || entry.pending.some((p) => p !== undefined)) return;
    if (entry.isAttachedAtEdge) {
      if (!entry.isDetaching) {
        entry.isDetaching = true;
        this.#send({ type: 'detach', binding: bindingId });
      }
      return;
    }
    if (entry.pending.length > 0) return;
    this.#bindings.delete(bindingId);
    if (this.#bindings.size === 0) void this.close();
  }

  /** close drains the connection: the control stream ends, then GOAWAY; in-flight streams finish. */
  close(): Promise<void> {
    this.#endControl();
    return this.session.close();
  }

  /** destroy drops the connection now. */
  destroy(): void {
    this.session.destroy();
  }

  #endControl(): void {
    const control = this.#control;
    if (control !== undefined && !control.destroyed && !control.writableEnded) control.end();
  }

  /** routeStream takes every stream of the connection (SharedStreamRouter). */
  routeStream(stream: ServerHttp2Stream, headers: IncomingHttpHeaders): void {
    const raw = headers[HEADER_BINDING];
    if (raw === undefined && headers[':path'] === CONTROL_PATH && headers[':method'] === 'POST') return this.#openControl(stream);
    delete headers[HEADER_BINDING];
    let bindingId: string | undefined;
    try {
      bindingId = typeof raw === 'string' ? decodeURIComponent(raw) : undefined;
    } catch {
      bindingId = undefined;
    }
    const meta = bindingId === undefined ? undefined : takeStreamMeta(headers);
    if (bindingId === undefined || meta === undefined) return respondQuietly(stream, 400);
    const entry = this.#bindings.get(bindingId);
    // The edge opens a binding's streams only once it attached it; its `attached` can still be
    // behind the first of them (nghttp2 sends a new stream's HEADERS before queued DATA, such as a
    // control message), so a binding whose attach awaits its answer is served too.
    const isAttaching = entry?.pending.some((p) => p !== undefined) === true;
    if (entry === undefined || (!entry.isAttachedAtEdge && !isAttaching)) return stream.close(h2constants.NGHTTP2_REFUSED_STREAM);
    try {
      this.#handler.handleStream(stream, headers, { bindingId, ...meta });
    } catch {
      respondQuietly(stream, 500);
    }
  }

  #openControl(stream: ServerHttp2Stream): void {
    if (this.#control !== undefined) return respondQuietly(stream, 400);
    this.#control = stream;
    stream.respond({ ':status': 200 });
    const reader = new ControlLineReader<EdgeControlMessage>(parseEdgeControlMessage);
    stream.on('data', (chunk: Buffer) => {
      let messages: EdgeControlMessage[];
      try {
        messages = reader.push(chunk);
      } catch (err) {
        return this.session.destroy(new TunnelProtocolError((err as Error).message));
      }
      for (const message of messages) this.#receive(message);
    });
    // The edge ends its half when the connection starts to close; this side then ends its own
    // (the stream closes and the session can drain). A control stream reset is a broken connection.
    stream.once('end', () => this.#endControl());
    stream.once('close', () => {
      if (stream.rstCode !== undefined && stream.rstCode !== h2constants.NGHTTP2_NO_ERROR) this.session.destroy(new TunnelClosedError('the edge reset the control stream'));
    });
    for (const line of this.#queued) stream.write(line);
    this.#queued = [];
  }

  #receive(message: EdgeControlMessage): void {
    const entry = this.#bindings.get(message.binding);
    if (entry === undefined) return;
    if (message.type === 'detached') {
      entry.isAttachedAtEdge = false;
      entry.isDetaching = false;
      // attachments still open mean the edge cut the binding (its key revoked, its reservation released).
      const err = new TunnelClosedError(`the edge closed binding ${message.binding}: ${message.reason}`);
      for (const attachment of entry.open) attachment.end(err);
      entry.open.clear();
    } else {
      const attachment = entry.pending.shift();
      if (message.type === 'attached') {
        entry.isAttachedAtEdge = true;
        if (attachment !== undefined) {
          entry.open.add(attachment);
          attachment.markOpen();
        }
      } else attachment?.end(new TunnelRefusedError(message.status, message.reason, message.binding));
    }
    this.#settle(message.binding, entry);
  }

  #send(message: AgentControlMessage): void {
    const line = encodeControlMessage(message);
    const control = this.#control;
    if (control === undefined) this.#queued.push(line);
    else if (!control.destroyed && control.writable) control.write(line);
  }

  #attachments(): BindingAttachment[] {
    const out: BindingAttachment[] = [];
    for (const entry of this.#bindings.values()) {
      out.push(...entry.open);
      for (const p of entry.pending) if (p !== undefined) out.push(p);
    }
    return out;
  }
}
