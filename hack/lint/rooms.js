// hack/lint/rooms.js — the import rule of docs/architecture.md as an ESLint rule (`tuna/rooms`).
//
// src/ is a house of rooms, one top-level folder each. A room may import only the rooms below it
// (ROOMS says which), and only through their index.ts; inside a room, files import each other
// freely. An import that points upward, sideways into a room not listed, or past another room's
// index is reported. A room listed in SUBROOMS is split the same way one level down: its folders
// are sub-rooms with the same two rules, and its root holds the assembly (free to import every
// sub-room's index) and a few base files every sub-room may import. Tests, benchmarks and hack
// scripts are outside the house and may import any module.
import path from 'node:path';

/** ROOMS maps each room of src/ to the rooms it may import (lowest first). */
export const ROOMS = {
  codec: [],
  model: [],
  wire: ['model'],
  crd: ['codec'],
  'control-api': ['codec', 'crd', 'model'],
  translate: ['codec', 'crd', 'model'],
  'access-log': ['model'],
  dataplane: ['model', 'wire', 'access-log'],
  tunnel: ['model', 'wire'],
  inspector: ['model', 'wire', 'dataplane'],
  agent: ['model', 'translate', 'dataplane', 'tunnel', 'wire'],
  edge: ['codec', 'crd', 'model', 'wire', 'access-log', 'control-api'],
  operator: ['codec', 'crd', 'model', 'wire', 'control-api', 'translate', 'access-log', 'dataplane', 'tunnel', 'agent'],
  cli: ['codec', 'crd', 'model', 'wire', 'control-api', 'translate', 'access-log', 'dataplane', 'tunnel', 'inspector', 'agent', 'edge', 'operator'],
};

/**
 * ENTRIES names a room's second entries besides its index.ts: a heavy part that only some commands
 * load, kept out of the index so the others do not import it (docs/architecture.md).
 */
export const ENTRIES = {
  // translateObjects pulls in every translator; `tuna http` and the demo's agent never translate
  agent: ['state.ts'],
};

/**
 * SUBROOMS splits a room into sub-rooms, one folder each, with the same rules one level down:
 * `rooms` maps each folder to the sub-rooms it may import (lowest first), only through their
 * index.ts; `base` names the files at the room's root that every sub-room may import (leaves that
 * import no sub-room). The other root files are the room's assembly and its index: they import
 * sub-rooms through their index.ts, and no sub-room imports them.
 */
export const SUBROOMS = {
  edge: {
    base: ['errors.ts', 'config.ts', 'edge-peers.ts'],
    rooms: {
      metrics: [],
      store: [],
      tunnels: ['metrics'],
      control: ['store'],
      acme: ['store', 'tunnels'],
      fronts: ['metrics', 'tunnels', 'acme'],
      'store-mode': ['store', 'tunnels', 'control'],
      listeners: ['metrics', 'tunnels', 'fronts'],
    },
  },
};

function isEntry(room, rest) {
  if (rest === 'index.js' || rest === 'index.ts') return true;
  const base = rest.replace(/\.js$/, '.ts');
  return (ENTRIES[room] ?? []).includes(base);
}

function roomOf(srcDir, file) {
  const rel = path.relative(srcDir, file);
  if (rel.startsWith('..') || path.isAbsolute(rel)) return undefined;
  const parts = rel.split(path.sep);
  return parts.length > 1 ? { room: parts[0], rest: parts.slice(1).join('/') } : undefined;
}

/** placeOf says where a path inside a room split by SUBROOMS lies: at its root (`sub` undefined) or in a sub-room. */
function placeOf(rest) {
  const parts = rest.split('/');
  return parts.length > 1 ? { sub: parts[0], rest: parts.slice(1).join('/') } : { sub: undefined, rest };
}

const asTs = (file) => file.replace(/\.js$/, '.ts');

/** checkInside applies SUBROOMS to an import from one file of `room` to another; it returns the report's data, or undefined. */
function checkInside(room, fromRest, toRest) {
  const split = SUBROOMS[room];
  if (!split) return undefined;
  const from = placeOf(fromRest);
  const to = placeOf(toRest);
  // both at the root, or both in one sub-room: free
  if (from.sub === to.sub) return undefined;
  if (to.sub !== undefined && !split.rooms[to.sub]) return { messageId: 'unknownSub', data: { room, to: to.sub } };
  if (from.sub !== undefined && !split.rooms[from.sub]) return { messageId: 'unknownSub', data: { room, to: from.sub } };
  if (to.sub === undefined) {
    // a sub-room reaching up to its room's root: only the base files
    if (split.base.includes(asTs(to.rest))) return undefined;
    return { messageId: 'upwardRoot', data: { room, from: from.sub, to: to.rest, base: split.base.join(', ') } };
  }
  if (from.sub === undefined) {
    if (split.base.includes(asTs(from.rest))) return { messageId: 'baseDown', data: { room, from: from.rest, to: to.sub } };
  } else if (!split.rooms[from.sub].includes(to.sub)) {
    const allowed = split.rooms[from.sub].join(', ') || 'nothing';
    return { messageId: 'upwardSub', data: { room, from: from.sub, to: to.sub, allowed } };
  }
  if (to.rest === 'index.js' || to.rest === 'index.ts') return undefined;
  return { messageId: 'bypassSub', data: { room, to: to.sub } };
}

/** @type {import('eslint').Rule.RuleModule} */
export const roomsRule = {
  meta: {
    type: 'problem',
    docs: { description: 'imports between the rooms of src/ follow docs/architecture.md' },
    schema: [],
    messages: {
      upward: "room '{{from}}' may not import room '{{to}}' (it may import: {{allowed}}); see docs/architecture.md",
      unknown: "'src/{{to}}' is not a room listed in hack/lint/rooms.js; add it there and to docs/architecture.md",
      bypass: "import room '{{to}}' through its index ('{{index}}'), not '{{spec}}'",
      upwardSub: "sub-room '{{room}}/{{from}}' may not import sub-room '{{room}}/{{to}}' (it may import: {{allowed}}); see docs/architecture.md",
      upwardRoot: "sub-room '{{room}}/{{from}}' may not import '{{room}}/{{to}}' of its room's root (only the base files: {{base}})",
      baseDown: "'{{room}}/{{from}}' is a base file of room '{{room}}' and may not import its sub-room '{{room}}/{{to}}'",
      unknownSub: "'src/{{room}}/{{to}}' is not a sub-room listed in SUBROOMS of hack/lint/rooms.js; add it there and to docs/architecture.md",
      bypassSub: "import sub-room '{{room}}/{{to}}' through its index ('{{index}}'), not '{{spec}}'",
    },
  },
  create(context) {
    const file = context.filename;
    const srcDir = path.join(context.cwd, 'src');
    const from = roomOf(srcDir, file);
    if (!from) return {};
    const check = (node, source) => {
      const spec = source?.value;
      if (typeof spec !== 'string' || !spec.startsWith('.')) return;
      const target = path.resolve(path.dirname(file), spec);
      const to = roomOf(srcDir, target);
      if (!to) return;
      if (to.room === from.room) {
        const found = checkInside(from.room, from.rest, to.rest);
        if (found?.messageId === 'bypassSub') {
          const index = path.relative(path.dirname(file), path.join(srcDir, to.room, placeOf(to.rest).sub, 'index.js'));
          found.data = { ...found.data, spec, index: index.startsWith('.') ? index : `./${index}` };
        }
        if (found) context.report({ node, ...found });
        return;
      }
      const allowed = ROOMS[from.room];
      if (!ROOMS[to.room]) return context.report({ node, messageId: 'unknown', data: { to: to.room } });
      if (!allowed || !allowed.includes(to.room)) {
        return context.report({ node, messageId: 'upward', data: { from: from.room, to: to.room, allowed: (allowed ?? []).join(', ') || 'nothing' } });
      }
      if (!isEntry(to.room, to.rest)) {
        const index = path.relative(path.dirname(file), path.join(srcDir, to.room, 'index.js'));
        context.report({ node, messageId: 'bypass', data: { to: to.room, spec, index: index.startsWith('.') ? index : `./${index}` } });
      }
    };
    return {
      ImportDeclaration: (node) => check(node, node.source),
      ExportNamedDeclaration: (node) => check(node, node.source),
      ExportAllDeclaration: (node) => check(node, node.source),
      ImportExpression: (node) => check(node, node.source),
    };
  },
};

/** plugin is the local ESLint plugin that carries the rule. */
export default { rules: { rooms: roomsRule } };
