import type { InjectionToken } from 'tsyringe';
import type { Store } from './store.js';

/** STORE is the tsyringe token for the edge's Store (registered in src/cli/container.ts). */
export const STORE: InjectionToken<Store> = Symbol.for('tuna.edge.Store');
