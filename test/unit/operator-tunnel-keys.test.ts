import { expect } from 'chai';
import { TunnelKeys } from '../../src/operator/index.js';

describe('TunnelKeys (the operator\'s minted keys by binding)', () => {
  it('gives an address reserved again by a new Gateway the new key, not the old Gateway\'s revoked one', async () => {
    const keys = new TunnelKeys();
    const edgeId = 'binding/address/127.77.0.5';
    keys.set('binding/address/ns/old-gateway', { keyId: 'key-old', token: 'old', edgeBindingId: edgeId });
    // the old Gateway went and its address was assigned to a new one: its entry must not win
    keys.set('binding/address/ns/new-gateway', { keyId: 'key-new', token: 'new', edgeBindingId: edgeId });
    expect(keys.forTunnel(edgeId)?.keyId).to.equal('key-new');
    expect(await keys.resolveKey(edgeId, 'key-new')).to.equal('new');
    expect(keys.bindings()).to.deep.equal(['binding/address/ns/new-gateway']);
  });

  it('keeps entries of different edge bindings side by side', () => {
    const keys = new TunnelKeys();
    keys.set('binding/address/ns/a', { keyId: 'ka', token: 'a', edgeBindingId: 'binding/address/127.77.0.1' });
    keys.set('binding/address/ns/b', { keyId: 'kb', token: 'b', edgeBindingId: 'binding/address/127.77.0.2' });
    keys.set('binding/host/x.example', { keyId: 'kx', token: 'x' });
    expect(keys.bindings().sort()).to.deep.equal(['binding/address/ns/a', 'binding/address/ns/b', 'binding/host/x.example']);
    expect(keys.forTunnel('binding/address/127.77.0.2')?.keyId).to.equal('kb');
  });
});
