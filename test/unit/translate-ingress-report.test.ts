/** Unit tests for writeReport: problems become one condition per type plus one Warning event each. */
import { expect } from 'chai';
import type { ObjectStatus } from '../../src/model/index.js';
import { writeReport } from '../../src/translate/common/report.js';
import type { Problem } from '../../src/translate/common/report.js';

function blank(): ObjectStatus {
  return { ref: { group: 'networking.k8s.io', kind: 'Ingress', namespace: 'default', name: 'web' }, observedGeneration: 7, conditions: [], events: [] };
}

const plan = { types: ['Accepted', 'ResolvedRefs', 'Conflicted'] as const, acceptedMessage: 'ours', published: ['http://a.example.com'] };

describe('writeReport', () => {
  it('writes healthy conditions with observedGeneration when there is no problem', () => {
    const status = blank();
    writeReport(status, [], { ...plan, types: [...plan.types] });
    expect(status.conditions.map((c) => [c.type, c.status, c.reason, c.observedGeneration])).to.deep.equal([
      ['Accepted', 'True', 'Accepted', 7],
      ['ResolvedRefs', 'True', 'ResolvedRefs', 7],
      ['Conflicted', 'False', 'NoConflicts', 7],
      ['Published', 'True', 'Published', 7],
    ]);
    expect(status.events).to.deep.equal([]);
  });

  it('gives a condition the first problem reason of its type and lists every message', () => {
    const status = blank();
    const problems: Problem[] = [
      { condition: 'ResolvedRefs', reason: 'ServiceNotFound', message: 'first' },
      { condition: 'ResolvedRefs', reason: 'ServicePortNotFound', message: 'second' },
    ];
    writeReport(status, problems, { ...plan, types: [...plan.types] });
    const refs = status.conditions.find((c) => c.type === 'ResolvedRefs');
    expect(refs).to.include({ status: 'False', reason: 'ServiceNotFound', message: 'first. second' });
    expect(status.events.map((e) => [e.type, e.reason])).to.deep.equal([
      ['Warning', 'ServiceNotFound'],
      ['Warning', 'ServicePortNotFound'],
    ]);
  });

  it('reports a conflict as Conflicted=True', () => {
    const status = blank();
    writeReport(status, [{ condition: 'Conflicted', reason: 'PathConflict', message: 'lost' }], { ...plan, types: [...plan.types] });
    expect(status.conditions.find((c) => c.type === 'Conflicted')).to.include({ status: 'True', reason: 'PathConflict' });
  });

  it('says PartiallyPublished when something is published despite problems', () => {
    const status = blank();
    writeReport(status, [{ condition: 'Accepted', reason: 'InvalidHost', message: 'bad host' }], { ...plan, types: [...plan.types] });
    expect(status.conditions.find((c) => c.type === 'Published')).to.include({ status: 'True', reason: 'PartiallyPublished' });
    expect(status.conditions.find((c) => c.type === 'Accepted')).to.include({ status: 'False', reason: 'InvalidHost' });
  });

  it('says NotPublished when nothing is published', () => {
    const status = blank();
    writeReport(status, [{ condition: 'Accepted', reason: 'NoRules', message: 'empty' }], { ...plan, types: [...plan.types], published: [] });
    expect(status.conditions.find((c) => c.type === 'Published')).to.include({ status: 'False', reason: 'NotPublished' });
  });

  it('writes only the condition types the plan names', () => {
    const status = blank();
    writeReport(status, [], { types: ['Accepted'], acceptedMessage: 'ours', published: ['tcp port 22'] });
    expect(status.conditions.map((c) => c.type)).to.deep.equal(['Accepted', 'Published']);
  });
});
