/**
 * A key the edge refuses makes the operator list the edge again soon, not at the ten-minute
 * relist: a key revoked out of band is replaced by a new one, a reservation released out of band
 * is reserved again, and refusals that a new list does not cure back the syncs off.
 */
import { expect } from 'chai';
import { EventEmitter } from 'node:events';
import { DataPlane, StaticEndpointResolver } from '../../src/dataplane/index.js';
import { EdgeReconciler, Operator, TunnelKeys } from '../../src/operator/index.js';
import type { SyncResult } from '../../src/operator/index.js';
import { TunnelClosedError, TunnelRefusedError } from '../../src/tunnel/index.js';
import { FakeClock } from '../support/tunnel-fake-clock.js';
import { FakeEdgeControl } from '../support/fake-edge-control.js';
import { ChangingObjects, RecordingTunnels, lbService } from '../support/operator-fakes.js';

const BASE = 'tuna.example.com';
const BINDING = `binding/host/web-default.${BASE}`;

/** TunnelErrors stands for the tunnel manager's 'tunnel-error' events. */
class TunnelErrors extends EventEmitter<{ 'tunnel-error': [bindingId: string, err: Error] }> {}

function setUp() {
  const clock = new FakeClock();
  const objects = new ChangingObjects();
  objects.items = [lbService('web')];
  const control = new FakeEdgeControl();
  const keys = new TunnelKeys();
  const tunnels = new RecordingTunnels();
  const errors = new TunnelErrors();
  let onSynced: (r: SyncResult) => void = () => undefined;
  const operator = new Operator({
    objects,
    dataPlane: new DataPlane({ endpoints: new StaticEndpointResolver() }),
    endpoints: new StaticEndpointResolver(),
    tunnels,
    reconciler: new EdgeReconciler(control, keys, { clusterId: 'c' }),
    keyRefOf: (id) => keys.forTunnel(id)?.keyId,
    translate: { baseDomain: BASE },
    tunnelErrors: errors,
    clock,
    onSynced: (r) => onSynced(r),
  });
  const nextSync = () => new Promise<SyncResult>((resolve) => (onSynced = resolve));
  return { clock, control, keys, tunnels, errors, operator, nextSync };
}

describe('operator: a key the edge refuses', () => {
  it('is replaced at the next sync, two seconds later, when it was revoked out of band', async () => {
    const { clock, control, keys, tunnels, errors, operator, nextSync } = setUp();
    await operator.start();
    const first = keys.get(BINDING)?.keyId ?? '';
    expect(first).to.not.equal('');
    await control.revokeTunnelKey(first);

    // the edge closes the binding, then refuses the key when the tunnel comes back
    errors.emit('tunnel-error', BINDING, new TunnelClosedError(`the edge closed binding ${BINDING}: revoked`));
    expect(clock.pending(), 'a closed tunnel alone asks for nothing').to.have.length(0);
    errors.emit('tunnel-error', BINDING, new TunnelRefusedError(403, 'forbidden', BINDING));
    errors.emit('tunnel-error', BINDING, new TunnelRefusedError(403, 'forbidden', BINDING));
    expect(clock.pending().map((t) => t.ms), 'one sync for every refusal until then').to.deep.equal([2000]);

    const listed = control.calls.listTunnelKeys;
    const synced = nextSync();
    clock.fireNext();
    const result = await synced;
    expect(control.calls.listTunnelKeys, 'the edge is listed again').to.equal(listed + 1);
    expect(result.edge?.minted).to.equal(1);
    const second = keys.get(BINDING)?.keyId;
    expect(second).to.not.equal(first);
    expect(control.keys.get(second ?? '')?.revokedAt).to.equal(null);
    expect(tunnels.applied.at(-1), 'the binding is handed to the tunnels again with its new key').to.deep.equal([BINDING]);
    await operator.stop();
  });

  it('reserves again a reservation released out of band', async () => {
    const { clock, control, keys, errors, operator, nextSync } = setUp();
    await operator.start();
    const [reservation] = [...control.reservations.values()];
    await control.release(reservation?.id ?? '');
    errors.emit('tunnel-error', BINDING, new TunnelRefusedError(403, 'forbidden', BINDING));
    const synced = nextSync();
    clock.fireNext();
    const result = await synced;
    expect(result.edge?.reserved).to.equal(1);
    expect(result.edge?.minted).to.equal(1);
    const held = [...control.reservations.values()];
    expect(held.map((r) => r.value)).to.deep.equal([`web-default.${BASE}`]);
    expect(held[0]?.id).to.not.equal(reservation?.id);
    expect(control.keys.get(keys.get(BINDING)?.keyId ?? '')?.reservationId).to.equal(held[0]?.id);
    await operator.stop();
  });

  it('backs off while the syncs it asks for change no key, and asks nothing for other failures', async () => {
    const { clock, errors, operator, nextSync } = setUp();
    await operator.start();
    errors.emit('tunnel-error', BINDING, new TunnelRefusedError(429, 'too many connections', BINDING));
    errors.emit('tunnel-error', BINDING, new Error('connect ECONNREFUSED'));
    expect(clock.pending(), 'not a key refusal').to.have.length(0);
    const waits: number[] = [];
    for (let i = 0; i < 4; i++) {
      // the key is live at the edge: listing it again changes nothing, the refusal has another cause
      errors.emit('tunnel-error', BINDING, new TunnelRefusedError(403, 'forbidden', BINDING));
      waits.push(clock.pending()[0]?.ms ?? 0);
      const synced = nextSync();
      clock.fireNext();
      await synced;
    }
    expect(waits).to.deep.equal([2000, 4000, 8000, 16000]);
    await operator.stop();
    expect(clock.pending()).to.have.length(0);
  });
});
