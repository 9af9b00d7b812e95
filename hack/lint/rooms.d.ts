// Types for hack/lint/rooms.js (an ESLint plugin written in plain JavaScript so eslint.config.js can load it).
import type { ESLint, Rule } from 'eslint';
export declare const ROOMS: Record<string, readonly string[]>;
export declare const SUBROOMS: Record<string, { base: readonly string[]; rooms: Record<string, readonly string[]> }>;
export declare const roomsRule: Rule.RuleModule;
declare const plugin: ESLint.Plugin;
export default plugin;
