import { expect } from 'chai';
import { ProcessGroup } from '../processes.js';

describe('bench/tunnel process group', () => {
  let group: ProcessGroup;

  beforeEach(() => {
    group = new ProcessGroup();
  });

  afterEach(async () => {
    await group.close();
  });

  it('reports a process that exits without being stopped, with its last output', async () => {
    const log = console.log;
    console.log = () => undefined;
    try {
      const proc = group.start('crasher', process.execPath, ['-e', 'console.error("edge: boom"); process.exit(3)'], 10_000);
      expect(await proc.exited).to.equal(3);
    } finally {
      console.log = log;
    }
    expect(group.unexpectedExits).to.deep.equal(['crasher exited 3 without being stopped: edge: boom']);
  });

  it('does not report a process it stopped itself', async () => {
    const proc = group.start('sleeper', process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], 10_000);
    await group.stop(proc);
    expect(proc.child.signalCode).to.equal('SIGTERM');
    expect(group.unexpectedExits).to.deep.equal([]);
  });

  it('kills a command that outlives its time bound', async () => {
    await group.run('hang', process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], 300).then(
      () => expect.fail('a hanging command completed'),
      (err: { code?: string }) => expect(err.code).to.equal('TUNA_BENCH_TIMEOUT'),
    );
  });
});
