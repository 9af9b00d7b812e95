// hack/lint/rooms.js — the import rule of docs/architecture.md as an ESLint rule (`tuna/rooms`).
//
// src/ is a house of rooms, one top-level folder each. A room may import only the rooms below it
// (ROOMS says which), and only through their index.ts; inside a room, files import each other
// freely. An import that points upward, sideways into a room not listed, or past another room's
// index is reported. Tests, benchmarks and hack scripts are outside the house and may import any
// module.
import path from 'node:path';

/** ROOMS maps each room of src/ to the rooms it may import (lowest first). */
export const ROOMS = {
  codec: [],
  model: [],
  wire: ['model'],
  crd: ['codec'],
  'control-api': ['codec', 'crd', 'model'],
  translate: ['codec', 'crd', 'model'],
  dataplane: ['model', 'wire'],
  tunnel: ['model', 'wire'],
  inspector: ['model', 'wire', 'dataplane'],
  agent: ['model', 'translate', 'dataplane', 'tunnel', 'wire'],
  edge: ['codec', 'crd', 'model', 'wire', 'control-api'],
  operator: ['codec', 'crd', 'model', 'wire', 'control-api', 'translate', 'dataplane', 'tunnel', 'agent'],
  cli: ['codec', 'crd', 'model', 'wire', 'control-api', 'translate', 'dataplane', 'tunnel', 'inspector', 'agent', 'edge', 'operator'],
};

/**
 * ENTRIES names a room's second entries besides its index.ts: a heavy part that only some commands
 * load, kept out of the index so the others do not import it (docs/architecture.md).
 */
export const ENTRIES = {
  // translateObjects pulls in every translator; `tuna http` and the demo's agent never translate
  agent: ['state.ts'],
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
      if (!to || to.room === from.room) return;
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
