import { expect } from 'chai';
import { Linter } from 'eslint';
import rooms, { ROOMS } from '../../hack/lint/rooms.js';

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
    expect(lint('src/edge/fronts/x.ts', "import { relay } from '../../wire/index.js';\nimport { a } from '../tunnels/registry.js';\nimport { b } from '../store/sql.js';\n")).to.deep.equal([]);
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

  it('names every room of src/ and lets no room import a room that may import it', () => {
    for (const [room, below] of Object.entries(ROOMS)) {
      for (const other of below) {
        expect(ROOMS[other as keyof typeof ROOMS], `${room} -> ${other}`).to.not.include(room);
      }
    }
  });
});
