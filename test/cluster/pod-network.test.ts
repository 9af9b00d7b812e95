// pod-network.test.ts — the pods' bridge keeps one link-layer address whatever veths join or leave
// it: a Linux bridge whose address was never set follows its lowest port's, and a change stalls
// every pod's connections to the host at once (their ARP entries for the gateway go stale).
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { BRIDGE_MAC, BRIDGE_NAME } from '../support/kubelet/pod-network.js';
import { runCommand, runCommandQuietly } from '../support/kubelet/run-command.js';

const bridgeMac = () => readFileSync(`/sys/class/net/${BRIDGE_NAME}/address`, 'utf8').trim();

describe('test kubelet: the pods’ bridge', () => {
  it('keeps its address while a port with a lower address joins and leaves (as a pod’s veth does)', async () => {
    expect(bridgeMac()).to.equal(BRIDGE_MAC);
    // set explicitly (3, NET_ADDR_SET), not inherited from a port
    expect(readFileSync(`/sys/class/net/${BRIDGE_NAME}/addr_assign_type`, 'utf8').trim()).to.equal('3');
    const [port, peer] = [`tkmac-${process.pid % 10000}`, `tkmacp-${process.pid % 10000}`];
    try {
      await runCommand('ip', ['link', 'add', port, 'address', '00:00:00:00:00:01', 'type', 'veth', 'peer', 'name', peer]);
      await runCommand('ip', ['link', 'set', port, 'master', BRIDGE_NAME, 'up']);
      expect(bridgeMac(), 'with the port attached').to.equal(BRIDGE_MAC);
      await runCommand('ip', ['link', 'del', port]);
      expect(bridgeMac(), 'after the port left').to.equal(BRIDGE_MAC);
    } finally {
      await runCommandQuietly('ip', ['link', 'del', port]);
    }
  });
});
