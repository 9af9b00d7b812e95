import { SystemClock } from '../../src/tunnel/clock.js';
import { NetEdgeDialer } from '../../src/tunnel/dialer.js';
import { StaticKeySource } from '../../src/tunnel/key-source.js';
import { TunnelManager } from '../../src/tunnel/manager.js';
import type { TunnelManagerOptions } from '../../src/tunnel/manager-options.js';
import type { TunnelStreamHandler } from '../../src/wire/stream-handler.js';

/** newTestManager builds a TunnelManager with real dialer and clock and keys by reference. */
export function newTestManager(handler: TunnelStreamHandler, keys: Map<string, string>, options: TunnelManagerOptions = {}): TunnelManager {
  return new TunnelManager(new NetEdgeDialer({ connectTimeoutMs: 2000 }), new SystemClock(), handler, new StaticKeySource(keys), options);
}
