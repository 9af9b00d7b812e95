/**
 * src/cli/cluster-entry: the restart back-off both primaries use (`tuna edge --workers`,
 * `tuna http --processes`).
 */
import { expect } from 'chai';
import { restartDelayMs } from '../../src/cli/cluster-entry.js';

describe('cluster workers: restart delay', () => {
  const now = 1_000_000;

  it('waits 100 ms after a first death, and after a death following a healthy run of over 10 s', () => {
    expect(restartDelayMs(undefined, now - 50, now)).to.equal(100);
    expect(restartDelayMs(6_400, now - 10_001, now)).to.equal(100);
  });

  it('doubles the delay while a worker keeps dying young, up to 10 s', () => {
    expect(restartDelayMs(100, now - 500, now)).to.equal(200);
    expect(restartDelayMs(6_400, now - 500, now)).to.equal(10_000);
    expect(restartDelayMs(10_000, now - 500, now)).to.equal(10_000);
  });
});
