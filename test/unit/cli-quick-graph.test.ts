import { expect } from 'chai';
import { httpTarget, tcpTarget } from '../../src/cli/quick-graph.js';
import { compileRouteTable, routeHttp, routeStream } from '../../src/dataplane/index.js';
import { validate } from '../../src/model/index.js';

describe('cli quick graphs (tuna http, tuna tcp)', () => {
  it('builds a valid graph for tuna http that routes every path of the host to the target', () => {
    const q = httpTarget('app.example.com', { address: '127.0.0.1', port: 3000 }, 'http');
    expect(validate(q.graph)).to.deep.equal([]);
    const table = compileRouteTable(q.graph);
    const r = routeHttp(table, { bindingId: 'binding/host/app.example.com', publicPort: 443, publicProtocol: 'https' }, 'app.example.com', {
      method: 'GET',
      path: '/deep/path',
      headers: {},
      query: new URLSearchParams(),
    });
    expect(r.kind === 'route' ? r.route.backends : r.kind).to.deep.equal([
      { kind: 'service', namespace: 'local', service: 'http', port: 3000, portName: 'http', protocol: 'http', weight: 1 },
    ]);
  });

  it('uses the binding id it is given', () => {
    expect(httpTarget('a.test', { address: '127.0.0.1', port: 1 }, 'h2c', 'binding/custom').graph.bindings[0]!.id).to.equal('binding/custom');
  });

  it('builds a valid graph for tuna tcp that forwards the edge port to the target', () => {
    const q = tcpTarget({ address: '127.0.0.1', port: 5432 }, 0);
    expect(validate(q.graph)).to.deep.equal([]);
    const r = routeStream(compileRouteTable(q.graph), { bindingId: q.graph.bindings[0]!.id, publicPort: 31001, publicProtocol: 'tcp' }, 'tcp.invalid');
    expect(r.kind).to.equal('forward');
  });
});
