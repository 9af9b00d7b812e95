import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { TunnelClosedError, TunnelDestroyedError } from './errors.js';
import type { TunnelLinkEvents, TunnelSessionState } from './session.js';
import type { SharedConnection } from './shared-connection.js';

/**
 * BindingAttachment is one binding served on a shared connection, as the tunnel manager's slot
 * sees it: the same life as a one-binding TunnelSession ('open', 'draining', 'close' (err?) once;
 * connect, close, destroy), so the manager's reconnect and make-before-break logic is the same for
 * both protocol versions. close() detaches the binding (its in-flight streams finish: the edge
 * answers `detached` after them); the connection stays for the other bindings.
 */
export class BindingAttachment extends EventEmitter<TunnelLinkEvents> {
  readonly bindingId: string;
  readonly #connection: SharedConnection;
  #state: TunnelSessionState = 'connecting';
  #error: Error | undefined;
  readonly #opened: Promise<void>;
  #resolveOpened!: () => void;
  #rejectOpened!: (err: Error) => void;
  readonly #closed: Promise<void>;
  #resolveClosed!: () => void;

  constructor(connection: SharedConnection, bindingId: string) {
    super();
    this.#connection = connection;
    this.bindingId = bindingId;
    this.#opened = new Promise((resolve, reject) => {
      this.#resolveOpened = resolve;
      this.#rejectOpened = reject;
    });
    this.#opened.catch(() => undefined);
    this.#closed = new Promise((resolve) => (this.#resolveClosed = resolve));
  }

  /** state is the attachment's life stage ('connecting' until the edge answers the attach). */
  get state(): TunnelSessionState {
    return this.#state;
  }

  /** connectionId is the shared connection's id (logs on both sides). */
  get connectionId(): string {
    return this.#connection.session.connectionId;
  }

  /** socket is the shared connection's socket. */
  get socket(): Socket | undefined {
    return this.#connection.session.socket;
  }

  /** error is why the attachment ended, if it ended with one. */
  get error(): Error | undefined {
    return this.#error;
  }

  /** grantHeaders: a shared connection's 101 names no binding, so there are none per binding. */
  get grantHeaders(): Readonly<Record<string, string>> {
    return {};
  }

  /** connect resolves once the edge attached the binding, and rejects with its refusal or the connection's failure. */
  connect(): Promise<void> {
    return this.#opened;
  }

  /** close detaches the binding gracefully; it resolves when the edge confirmed or the connection ended. */
  close(): Promise<void> {
    if (this.#state === 'closed') return this.#closed;
    if (this.#state === 'connecting') {
      this.#connection.release(this);
      this.end(new TunnelClosedError());
      return this.#closed;
    }
    this.#state = 'draining';
    this.#connection.release(this);
    // The edge's `detached` (or the connection closing) ends the binding's entry, not this object;
    // nothing else of this attachment needs to finish, so it ends now and its streams finish on.
    this.end(undefined);
    return this.#closed;
  }

  /** destroy stops serving now (the binding is detached; its in-flight streams are the connection's to finish). */
  destroy(err?: Error): void {
    if (this.#state === 'closed') return;
    this.#connection.release(this);
    this.end(err ?? new TunnelDestroyedError());
  }

  /** closed resolves when the attachment has ended. */
  closed(): Promise<void> {
    return this.#closed;
  }

  /** markOpen: the edge attached the binding (SharedConnection calls it). */
  markOpen(): void {
    if (this.#state !== 'connecting') return;
    this.#state = 'open';
    this.#resolveOpened();
    this.emit('open');
  }

  /** markDraining: the connection received GOAWAY; the binding takes no new streams here. */
  markDraining(): void {
    if (this.#state !== 'open') return;
    this.#state = 'draining';
    this.emit('draining');
  }

  /** end finishes the attachment with err (refused, cut by the edge, connection gone) or none (closed by us). */
  end(err: Error | undefined): void {
    if (this.#state === 'closed') return;
    const wasConnecting = this.#state === 'connecting';
    this.#state = 'closed';
    this.#error ??= err;
    if (wasConnecting) this.#rejectOpened(this.#error ?? new TunnelClosedError());
    this.#resolveClosed();
    this.emit('close', this.#error);
  }
}
