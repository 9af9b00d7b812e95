import type { InjectionToken } from 'tsyringe';
import type { Store } from './store.js';

/** STORE is the tsyringe token for a Store the caller opened and owns (src/edge/container.ts: registered, it replaces the config's store). */
export const STORE: InjectionToken<Store> = Symbol.for('tuna.edge.Store');
