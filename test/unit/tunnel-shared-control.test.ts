import { expect } from 'chai';
import {
  ControlLineError,
  ControlLineReader,
  MAX_CONTROL_LINE_BYTES,
  encodeControlMessage,
  parseAgentControlMessage,
  parseEdgeControlMessage,
} from '../../src/wire/shared-connection.js';
import type { AgentControlMessage, EdgeControlMessage } from '../../src/wire/shared-connection.js';

describe('shared connection control messages (protocol version 2)', () => {
  it('round-trips every agent and edge message through lines split at any byte', () => {
    const agent: AgentControlMessage[] = [
      { type: 'attach', binding: 'binding/host/a.test', key: 'tuna_tk_x' },
      { type: 'detach', binding: 'binding/tcp-port/20022' },
    ];
    const edge: EdgeControlMessage[] = [
      { type: 'attached', binding: 'binding/host/a.test' },
      { type: 'refused', binding: 'binding/host/b.test', status: 403, reason: 'tunnel refused: the key is not valid for this binding' },
      { type: 'detached', binding: 'binding/host/a.test', reason: 'closed by the edge' },
    ];
    const text = agent.map(encodeControlMessage).join('');
    const reader = new ControlLineReader(parseAgentControlMessage);
    const seen: AgentControlMessage[] = [];
    for (const ch of text) seen.push(...reader.push(ch));
    expect(seen).to.deep.equal(agent);
    const edgeReader = new ControlLineReader(parseEdgeControlMessage);
    expect(edgeReader.push(Buffer.from(edge.map(encodeControlMessage).join('')))).to.deep.equal(edge);
  });

  const bad: [string, string][] = [
    ['not JSON', '{nope\n'],
    ['an unknown type', '{"type":"attach-all","binding":"b"}\n'],
    ['an attach without a key', '{"type":"attach","binding":"b"}\n'],
    ['an empty binding', '{"type":"detach","binding":""}\n'],
    ['an edge message sent by the agent', '{"type":"attached","binding":"b"}\n'],
  ];
  for (const [what, line] of bad) {
    it(`rejects ${what} from the agent`, () => {
      expect(() => new ControlLineReader(parseAgentControlMessage).push(line)).to.throw(ControlLineError, /malformed control message/);
    });
  }

  it('rejects a line longer than the limit before it ends', () => {
    const reader = new ControlLineReader(parseAgentControlMessage);
    expect(() => reader.push('x'.repeat(MAX_CONTROL_LINE_BYTES + 1))).to.throw(ControlLineError, /too long/).with.property('code', 'TUNA_CONTROL_MALFORMED');
  });

  it('rejects a refusal without its status from the edge', () => {
    expect(parseEdgeControlMessage({ type: 'refused', binding: 'b', reason: 'r' })).to.equal(undefined);
  });
});
