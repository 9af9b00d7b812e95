import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { Linter } from 'eslint';
import rooms, { ROOMS, SUBROOMS } from '../../hack/lint/rooms.js';

// The import rule of docs/architecture.md, run on small files placed in a pretend checkout.
describe('the rooms rule (docs/architecture.md)', () => {
  const linter = new Linter({ cwd: '/repo', configType: 'flat' });
  const config = [{ files: ['**/*.ts'], plugins: { tuna: rooms }, rules: { 'tuna/rooms': 'error' as const } }];
  const lint = (file: string, code: string): string[] =>
    linter.verify(code, config, { filename: `/repo/${file}` }).map((m) => m.message);

  it('refuses an upward import (the operator importing the CLI)', () => {
    const messages = lint('src/operator/sync.ts', "import { ControlClient } from '../cli/index.js';\n");
    expect(messages).to.have.length(1);
    expect(messages[0]).to.contain("room 'operator' may not import room 'cli'");
  });

  it('refuses a sideways import into a room not listed (the data plane importing the edge)', () => {
    expect(lint('src/dataplane/x.ts', "export * from '../edge/index.js';\n")[0]).to.contain("room 'dataplane' may not import room 'edge'");
  });

  it('refuses an import that bypasses another room\'s index', () => {
    const messages = lint('src/edge/fronts/x.ts', "import { relay } from '../../wire/relay.js';\n");
    expect(messages).to.deep.equal(["import room 'wire' through its index ('../../wire/index.js'), not '../../wire/relay.js'"]);
  });

  it('allows imports through an index of a room below, and any import inside a room', () => {
    expect(lint('src/dataplane/policies/x.ts', "import { meta } from '../../wire/index.js';\nimport { a } from '../router.js';\nimport { b } from './compile.js';\n")).to.deep.equal([]);
  });

  it("allows a room's declared second entry (agent/state.ts) and no other file of that room", () => {
    expect(lint('src/operator/x.ts', "import { translateObjects } from '../agent/state.js';\n")).to.deep.equal([]);
    expect(lint('src/operator/x.ts', "import { Agent } from '../agent/agent.js';\n")).to.deep.equal([
      "import room 'agent' through its index ('../agent/index.js'), not '../agent/agent.js'",
    ]);
    // an entry of one room is not an entry of another
    expect(lint('src/edge/x.ts', "import { a } from '../wire/state.js';\n")).to.have.length(1);
  });

  it('leaves tests and package imports alone', () => {
    expect(lint('test/unit/x.test.ts', "import { a } from '../../src/cli/agent-options.js';\n")).to.deep.equal([]);
    expect(lint('src/model/x.ts', "import { parse } from 'yaml';\n")).to.deep.equal([]);
  });

  describe('the sub-rooms of edge', () => {
    it('refuses an import past another sub-room\'s index (a front reaching into the tunnels\' directory)', () => {
      expect(lint('src/edge/fronts/x.ts', "import { EdgeBinding } from '../tunnels/directory.js';\n")).to.deep.equal([
        "import sub-room 'edge/tunnels' through its index ('../tunnels/index.js'), not '../tunnels/directory.js'",
      ]);
      // the edge's root (its assembly) goes through the index too
      expect(lint('src/edge/edge-server.ts', "import { PublicFront } from './fronts/public-front.js';\n")).to.deep.equal([
        "import sub-room 'edge/fronts' through its index ('./fronts/index.js'), not './fronts/public-front.js'",
      ]);
    });

    it('allows a sub-room below through its index, any import inside a sub-room, and the base files of the root', () => {
      const code = "import { EdgeBinding } from '../tunnels/index.js';\nimport { a } from './sni.js';\nimport { EdgeError } from '../errors.js';\n";
      expect(lint('src/edge/fronts/x.ts', code)).to.deep.equal([]);
      expect(lint('src/edge/edge-server.ts', "import { PublicFront } from './fronts/index.js';\nimport { b } from './config.js';\n")).to.deep.equal([]);
    });

    it('refuses an upward or sideways import between sub-rooms (the tunnels importing the fronts, the store importing the tunnels)', () => {
      expect(lint('src/edge/tunnels/x.ts', "import { PublicFront } from '../fronts/index.js';\n")).to.deep.equal([
        "sub-room 'edge/tunnels' may not import sub-room 'edge/fronts' (it may import: metrics); see docs/architecture.md",
      ]);
      expect(lint('src/edge/store/x.ts', "export * from '../tunnels/index.js';\n")[0]).to.contain("sub-room 'edge/store' may not import sub-room 'edge/tunnels' (it may import: nothing)");
    });

    it('refuses a sub-room importing the assembly at the root, and a base file importing a sub-room', () => {
      expect(lint('src/edge/acme/x.ts', "import { EdgeServerOptions } from '../edge-server.js';\n")[0]).to.contain("sub-room 'edge/acme' may not import 'edge/edge-server.js' of its room's root");
      expect(lint('src/edge/config.ts', "import { HTTP1_FORWARDING_MODES } from './fronts/index.js';\n")[0]).to.contain("'edge/config.ts' is a base file of room 'edge' and may not import its sub-room 'edge/fronts'");
    });

    it('refuses a folder of edge that SUBROOMS does not list', () => {
      expect(lint('src/edge/edge-server.ts', "import { x } from './quic/index.js';\n")[0]).to.contain("'src/edge/quic' is not a sub-room listed in SUBROOMS");
    });

    it('lists every folder of src/edge, each with an index.ts, and no sub-room imports one that may import it', () => {
      const folders = readdirSync('src/edge', { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name).sort();
      expect(Object.keys(SUBROOMS.edge!.rooms).sort()).to.deep.equal(folders);
      for (const folder of folders) expect(existsSync(join('src/edge', folder, 'index.ts')), `src/edge/${folder}/index.ts`).to.equal(true);
      const below = SUBROOMS.edge!.rooms;
      // depth-first: a sub-room reached again on the path it started from is a cycle
      const visit = (room: string, path: readonly string[]): void => {
        expect(path, `${[...path, room].join(' -> ')}`).to.not.include(room);
        for (const next of below[room] ?? []) visit(next, [...path, room]);
      };
      for (const room of Object.keys(below)) visit(room, []);
      for (const file of SUBROOMS.edge!.base) expect(existsSync(join('src/edge', file)), `src/edge/${file}`).to.equal(true);
    });
  });

  it('names every room of src/ and lets no room import a room that may import it', () => {
    for (const [room, below] of Object.entries(ROOMS)) {
      for (const other of below) {
        expect(ROOMS[other as keyof typeof ROOMS], `${room} -> ${other}`).to.not.include(room);
      }
    }
  });
});
