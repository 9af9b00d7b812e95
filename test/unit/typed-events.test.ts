import { expect } from 'chai';
import { EventEmitter } from 'node:events';
import type { LeaderElector } from '../../src/operator/leader-elector.js';
import type { BindingAttachment } from '../../src/tunnel/binding-attachment.js';
import type { TunnelManager } from '../../src/tunnel/manager.js';
import type { TunnelLink, TunnelSession } from '../../src/tunnel/session.js';
import type { SharedConnection } from '../../src/tunnel/shared-connection.js';
import type { TunnelGroup } from '../../src/tunnel/tunnel-group.js';

// The event emitters of src carry an event map (EventEmitter<{ name: [args] }> of @types/node), so
// a misspelled event name or a listener of the wrong signature does not compile. Each
// `@ts-expect-error` below is checked by `npm run typecheck` (and lint): if an emitter lost its map,
// the line would compile and tsc would fail on the unused directive. The functions are only
// type-checked; the one test run checks that a map is a type only (emit and on behave as before).

/** misuses holds one wrong use per emitter; never called, only compiled. */
export function misuses(manager: TunnelManager, group: TunnelGroup, link: TunnelLink, session: TunnelSession, attachment: BindingAttachment, shared: SharedConnection, elector: LeaderElector): void {
  // @ts-expect-error 'tunnel-errors' is not an event of the tunnel manager
  manager.on('tunnel-errors', () => undefined);
  // @ts-expect-error the manager's 'open' gives (bindingId, session), not a number
  manager.on('open', (_id: number) => undefined);
  // @ts-expect-error the manager emits 'tunnel-error' with its binding id first
  manager.emit('tunnel-error', new Error('x'));
  // @ts-expect-error a group's 'tunnel-error' says whether it was a connect failure (a boolean)
  group.emit('tunnel-error', new Error('x'), 'yes');
  // @ts-expect-error 'reconnect' is spelled 'reconnected'
  group.on('reconnect', () => undefined);
  // @ts-expect-error a link's 'close' gives an Error or undefined, not a string
  link.on('close', (_why: string) => undefined);
  // @ts-expect-error 'drain' is spelled 'draining'
  session.on('drain', () => undefined);
  // @ts-expect-error 'opened' is spelled 'open'
  attachment.once('opened', () => undefined);
  // @ts-expect-error a shared connection has only 'close'
  shared.on('open', () => undefined);
  // @ts-expect-error 'started-leader' is spelled 'started-leading'
  elector.on('started-leader', () => undefined);
}

describe('typed events', () => {
  it('keeps emit and on as Node has them: a map is a type only', () => {
    const emitter = new EventEmitter<{ open: [bindingId: string] }>();
    const seen: string[] = [];
    emitter.on('open', (id) => seen.push(id));
    expect(emitter.emit('open', 'b1')).to.equal(true);
    expect(seen).to.deep.equal(['b1']);
  });
});
