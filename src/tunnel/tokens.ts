import type { InjectionToken } from 'tsyringe';
import type { Clock } from './clock.js';
import type { EdgeDialer } from './dialer.js';
import type { TunnelKeySource } from './key-source.js';
import type { TunnelManagerOptions } from './manager-options.js';
import type { TunnelStreamHandler } from '../wire/index.js';

/**
 * Injection tokens of the tunnel manager's dependencies. esbuild/tsx emit no decorator metadata,
 * so every constructor parameter names its token explicitly (`@inject(TOKEN)`).
 */

/** EDGE_DIALER resolves the EdgeDialer (NetEdgeDialer in production). */
export const EDGE_DIALER: InjectionToken<EdgeDialer> = Symbol.for('tuna.tunnel.EdgeDialer');

/** CLOCK resolves the Clock (SystemClock in production). */
export const CLOCK: InjectionToken<Clock> = Symbol.for('tuna.tunnel.Clock');

/** TUNNEL_STREAM_HANDLER resolves the data plane's TunnelStreamHandler. */
export const TUNNEL_STREAM_HANDLER: InjectionToken<TunnelStreamHandler> = Symbol.for('tuna.tunnel.TunnelStreamHandler');

/** TUNNEL_KEY_SOURCE resolves the TunnelKeySource. */
export const TUNNEL_KEY_SOURCE: InjectionToken<TunnelKeySource> = Symbol.for('tuna.tunnel.TunnelKeySource');

/** TUNNEL_MANAGER_OPTIONS resolves TunnelManagerOptions (register `{ useValue: {} }` for defaults). */
export const TUNNEL_MANAGER_OPTIONS: InjectionToken<TunnelManagerOptions> = Symbol.for('tuna.tunnel.TunnelManagerOptions');
