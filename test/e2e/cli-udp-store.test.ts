import { expect } from 'chai';
import { createSocket } from 'node:dgram';
import type { Socket as DgramSocket } from 'node:dgram';
import { once } from 'node:events';
import type { EdgeServer } from '../../src/edge/index.js';
import { openSqliteStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';
import { startCli } from '../support/backend-cli.js';
import type { CliRun } from '../support/backend-cli.js';
import { reserveAndMint, seedAccount, startStoreEdge } from '../support/edge-store-harness.js';
import { waitUntil } from '../support/tunnel-harness.js';

// Store mode (docs/protocol.md §4.6): a tcp-port reservation with a `udp` tunnel key opens the
// port's UDP socket, and `tuna udp` serves it and prints the public address.

describe('tuna udp against a store-mode edge', function () {
  this.timeout(30_000);
  let store: Store | undefined;
  let edge: EdgeServer | undefined;
  let run: CliRun | undefined;
  const sockets: DgramSocket[] = [];

  afterEach(async () => {
    run?.stop();
    await run?.exit.catch(() => 0);
    await edge?.close();
    await store?.close();
    for (const s of sockets.splice(0)) s.close();
    run = undefined;
    edge = undefined;
    store = undefined;
  });

  async function udpSocket(): Promise<DgramSocket> {
    const s = createSocket('udp4');
    sockets.push(s);
    s.bind(0, '127.0.0.1');
    await once(s, 'listening');
    return s;
  }

  it('publishes a reserved port for UDP with a udp key and prints udp://host:port', async () => {
    store = await openSqliteStore(':memory:');
    const seeded = await seedAccount(store);
    const started = await startStoreEdge(store);
    edge = started.edge;
    const echo = await udpSocket();
    echo.on('message', (msg, remote) => echo.send(msg, remote.port, remote.address));
    const minted = await reserveAndMint(started.controlPort, seeded.reservationsToken, { kind: 'tcp-port' }, { protocol: 'udp' });
    const port = Number(minted.value);
    await waitUntil(() => edge!.address().udp.get(minted.bindingId)?.[0]?.port === port);
    expect(edge.address().bindings.get(minted.bindingId), 'a port whose keys are all udp opens no TCP listener').to.equal(undefined);
    run = startCli(['udp', String(echo.address().port), '--binding', minted.bindingId, '--edge', `tcp://127.0.0.1:${started.controlPort}`, '--key', minted.token], {});
    await run.waitForOut('Forwarding edge UDP binding');
    expect(run.out.join('\n')).to.contain(`Public address: udp://127.0.0.1:${port}`);
    const client = await udpSocket();
    const reply = once(client, 'message');
    client.send('over the store', port, '127.0.0.1');
    const [msg] = (await Promise.race([reply, new Promise((_, reject) => setTimeout(() => reject(new Error('no echo in 5 s')), 5000))])) as [Buffer];
    expect(msg.toString(), run.err.join('\n')).to.equal('over the store');
  });
});
