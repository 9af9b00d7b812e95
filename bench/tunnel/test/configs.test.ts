import { expect } from 'chai';
import { chiselRemote } from '../contenders/chisel.js';
import { frpcConfig, frpsConfig } from '../contenders/frp.js';
import { nginxConfig } from '../contenders/nginx.js';
import { tunaCommands } from '../contenders/tuna.js';
import type { TunaEdgeSetup } from '../contenders/tuna.js';
import { resolveOptions } from '../index.js';

describe('bench/tunnel contender configs', () => {
  it('makes nginx listen on loopback and keep upstream connections alive without buffering', () => {
    const conf = nginxConfig('/x', 8080, 9090);
    expect(conf).to.contain('listen 127.0.0.1:8080');
    expect(conf).to.contain('server 127.0.0.1:9090;');
    expect(conf).to.match(/keepalive \d+;/);
    expect(conf).to.contain('proxy_set_header Connection "";');
    expect(conf).to.contain('proxy_buffering off;');
    expect(conf).to.contain('proxy_request_buffering off;');
  });

  it('binds frps to loopback with a vhost HTTP port', () => {
    const conf = frpsConfig(7000, 7080);
    expect(conf).to.contain('bindAddr = "127.0.0.1"');
    expect(conf).to.contain('proxyBindAddr = "127.0.0.1"');
    expect(conf).to.contain('vhostHTTPPort = 7080');
  });

  it('writes one frpc proxy per entry: http by domain, tcp by remote port', () => {
    const conf = frpcConfig(7000, 9090, [{ name: 'web', domain: 'web.test' }, { name: 'raw', remotePort: 7001 }]);
    expect(conf.match(/\[\[proxies\]\]/g)).to.have.length(2);
    expect(conf).to.contain('type = "http"\nlocalIP = "127.0.0.1"\nlocalPort = 9090\ncustomDomains = ["web.test"]');
    expect(conf).to.contain('type = "tcp"\nlocalIP = "127.0.0.1"\nlocalPort = 9090\nremotePort = 7001');
  });

  it('runs tuna pinned to --workers / --processes N in the pinned rows, and without either (the defaults) in the auto row', () => {
    const setup: TunaEdgeSetup = { httpPort: 1, tunnelPort: 2, hosts: ['a.test'], keySha256: new Map() };
    const pinned = tunaCommands(setup, 'edge.yaml', 1, 1);
    expect(pinned.edge).to.deep.equal(['edge', '--config', 'edge.yaml', '--workers', '1']);
    expect(pinned.http(9, 'a.test')).to.include.members(['--processes', '1']);
    const auto = tunaCommands(setup, 'edge.yaml', 'auto', 'auto');
    expect(auto.edge).to.deep.equal(['edge', '--config', 'edge.yaml']);
    expect(auto.http(9, 'a.test', 3)).to.deep.equal(['http', '9', '--host', 'a.test', '--connections', '3', '--edge', 'tcp://127.0.0.1:2']);
  });

  it('asks chisel for a reverse remote from a loopback port to the backend', () => {
    expect(chiselRemote(8000, 9090)).to.equal('R:127.0.0.1:8000:127.0.0.1:9090');
  });

  it('takes options first, then the environment, then the defaults', () => {
    const o = resolveOptions({ runs: 5 }, { TUNA_BENCH_RUNS: '2', TUNA_BENCH_SECONDS: '3', TUNA_BENCH_CONTENDERS: 'direct, frp', TUNA_BENCH_RATE: 'fast' });
    expect(o.runs).to.equal(5);
    expect(o.seconds).to.equal(3);
    expect(o.contenders).to.deep.equal(['direct', 'frp']);
    expect(o.rate).to.equal(2000);
    expect(o.transferBytes).to.equal(2 ** 30);
  });
});
