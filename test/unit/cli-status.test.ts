import { expect } from 'chai';
import { buildClusterStatus } from '../../src/cli/status-cluster.js';
import type { ClusterEvent, ClusterObject } from '../../src/cli/status-cluster.js';
import { buildEdgeStatus, tunnelsByBinding } from '../../src/cli/status-edge.js';
import { renderStatusJson, renderStatusTable } from '../../src/cli/status-report.js';
import type { StatusBinding, StatusReport } from '../../src/cli/status-report.js';
import type { EdgeInfo, Reservation, TunnelKey } from '../../src/control-api/index.js';
import { selfSignedCertificate } from '../support/tunnel-certs.js';

const binding = (over: Partial<StatusBinding>): StatusBinding => ({
  id: 'binding/host/a.test',
  kind: 'domain',
  addresses: ['a.test'],
  from: [],
  tunnels: null,
  edges: [],
  heldBack: [],
  certificateExpiresAt: null,
  keyExpiresAt: null,
  lastError: null,
  ...over,
});

describe('tuna status rendering', () => {
  it('prints one aligned row per binding, ? for unknown tunnels, - for empty cells and times in UTC to the second', () => {
    const report: StatusReport = {
      view: 'edge',
      source: 'http://127.0.0.1:1',
      bindings: [
        binding({ tunnels: 2, edges: ['http://127.0.0.1:1'], from: ['default/web', 'team=a'], keyExpiresAt: Date.UTC(2027, 0, 2, 3, 4, 5, 678) }),
        binding({ id: 'binding/tcp-port/20022', kind: 'tcp-port', addresses: ['20022'], heldBack: ['ListenerFailed: 0.0.0.0:20022/tcp'], lastError: 'EADDRINUSE (3 attempts failed in a row)' }),
      ],
      notes: [],
    };
    expect(renderStatusTable(report).split('\n')).to.deep.equal([
      'BINDING                 KIND      ADDRESSES  FROM                TUNNELS  EDGES               HELD-BACK                          CERT-EXPIRES  KEY-EXPIRES           LAST-ERROR',
      'binding/host/a.test     domain    a.test     default/web,team=a  2        http://127.0.0.1:1  -                                  -             2027-01-02T03:04:05Z  -',
      'binding/tcp-port/20022  tcp-port  20022      -                   ?        -                   ListenerFailed: 0.0.0.0:20022/tcp  -             -                     EADDRINUSE (3 attempts failed in a row)',
    ]);
  });

  it('prints the header alone when there is no binding, and JSON with null for what is unknown', () => {
    const report: StatusReport = { view: 'cluster', source: 'https://127.0.0.1:6443', bindings: [binding({})], notes: ['n'] };
    expect(renderStatusTable({ ...report, bindings: [] })).to.equal('BINDING  KIND  ADDRESSES  FROM  TUNNELS  EDGES  HELD-BACK  CERT-EXPIRES  KEY-EXPIRES  LAST-ERROR');
    const parsed = JSON.parse(renderStatusJson(report)) as StatusReport;
    expect(parsed).to.deep.equal(report);
    expect(parsed.bindings[0]).to.include({ tunnels: null, certificateExpiresAt: null, lastError: null });
  });
});

describe('tuna status --edge: reading the answers', () => {
  const edge: EdgeInfo = { version: '0.1.0', baseDomain: 'tuna.test', portPool: null, addressPool: null, http: null, https: null, scheme: null };
  const reservation = (over: Partial<Reservation>): Reservation => ({
    id: 'r1', accountId: 'a', kind: 'domain', value: 'app.tuna.test', name: null, labels: {}, domainType: 'subdomain', verificationToken: null, verified: true, createdAt: 1, updatedAt: 1, ...over,
  });
  const key = (reservationId: string, expiresAt: number): TunnelKey => ({
    id: `k${expiresAt}`, accountId: 'a', reservationId, protocol: 'http', maxConnections: 2, expiresAt, labels: {}, createdAt: 1, rotatedAt: null, revokedAt: null,
  });

  it('sums tuna_edge_tunnels by binding over workers, reads escaped label values and ignores other families', () => {
    const text = [
      '# HELP tuna_edge_tunnels Live tunnel connections by binding.',
      '# TYPE tuna_edge_tunnels gauge',
      'tuna_edge_tunnels{binding="binding/host/a.test",worker="0"} 1',
      'tuna_edge_tunnels{worker="1",binding="binding/host/a.test"} 2',
      'tuna_edge_tunnels{binding="binding/host/q\\"x"} 1',
      'tuna_edge_tunnels_total{binding="binding/host/b.test"} 9',
      'tuna_edge_streams_active 4',
    ].join('\n');
    expect([...tunnelsByBinding(text)]).to.deep.equal([
      ['binding/host/a.test', 3],
      ['binding/host/q"x', 1],
    ]);
  });

  it('builds one binding per reservation: address ports, a failed listener as held back and last error, the first key expiry, 0 tunnels where none is live', () => {
    const report = buildEdgeStatus({
      source: 'https://edge.test:7443',
      edge,
      reservations: [
        reservation({ id: 'r2', kind: 'address', value: '127.77.0.5', domainType: null, ports: [{ port: 80, protocol: 'http' }, { port: 5432, protocol: 'tcp' }],
          status: { listeners: [{ address: '127.77.0.5', port: 5432, protocol: 'tcp', state: 'failed', error: 'EADDRNOTAVAIL', failures: 3, retryAt: 5 }] } }),
        reservation({ name: 'default/web', labels: { 'tuna.dev/owner-kind': 'Ingress' } }),
      ],
      tunnelKeys: [key('r1', 3000), key('r1', 2000), key('r9', 1000)],
      metrics: { text: 'tuna_edge_tunnels{binding="binding/host/app.tuna.test"} 2\n' },
    });
    expect(report.notes).to.deep.equal([]);
    expect(report.edge).to.deep.equal({ version: '0.1.0', baseDomain: 'tuna.test' });
    expect(report.bindings).to.deep.equal([
      binding({ id: 'binding/address/127.77.0.5', kind: 'address', addresses: ['127.77.0.5:80/http', '127.77.0.5:5432/tcp'], tunnels: 0, edges: ['https://edge.test:7443'],
        heldBack: ['ListenerFailed: 127.77.0.5:5432/tcp'], lastError: 'EADDRNOTAVAIL (3 attempts failed in a row)' }),
      binding({ id: 'binding/host/app.tuna.test', addresses: ['app.tuna.test'], from: ['default/web', 'tuna.dev/owner-kind=Ingress'], tunnels: 2, edges: ['https://edge.test:7443'], keyExpiresAt: 2000 }),
    ]);
  });

  it('leaves the tunnels unknown (null) and says why when /metrics could not be read', () => {
    const report = buildEdgeStatus({ source: 's', edge, reservations: [reservation({ kind: 'domain', value: 'www.example.org', domainType: 'custom', verified: false })], tunnelKeys: [], metrics: { unavailable: 'answered 401' } });
    expect(report.notes).to.deep.equal(['tunnel connections unknown: answered 401']);
    expect(report.bindings[0]).to.deep.include({ tunnels: null, heldBack: ['Unverified: the DNS TXT record _tuna-challenge.www.example.org must hold the verification token'] });
  });
});

describe('tuna status --kubeconfig: reading the objects', () => {
  const ingress = (name: string, created: string, path: string, status?: unknown): ClusterObject => ({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name, namespace: 'default', creationTimestamp: created } as ClusterObject['metadata'],
    spec: {
      ingressClassName: 'tuna',
      tls: [{ hosts: ['www.example.com'], secretName: 'www-tls' }],
      rules: [{ host: 'www.example.com', http: { paths: [{ path, pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } }],
    },
    ...(status !== undefined ? { status } : {}),
  });
  const objects: ClusterObject[] = [
    ingress('site', '2025-01-01T00:00:00Z', '/', { loadBalancer: { ingress: [{ hostname: 'www.example.com' }] } }),
    ingress('api', '2026-01-01T00:00:00Z', '/api'),
    { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'www-tls', namespace: 'default' }, type: 'kubernetes.io/tls', data: { 'tls.crt': '', 'tls.key': '' } },
    { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' }, spec: { ports: [{ name: 'http', port: 80 }] } },
    { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', metadata: { name: 'tuna' }, spec: { controllerName: 'tuna.dev/gateway-controller' } },
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: { name: 'gw', namespace: 'infra' },
      spec: { gatewayClassName: 'tuna', listeners: [{ name: 'tcp', port: 5432, protocol: 'TCP', allowedRoutes: { namespaces: { from: 'All' } } }] },
      status: {
        conditions: [
          { type: 'Accepted', status: 'True', reason: 'Accepted', message: '' },
          { type: 'Programmed', status: 'False', reason: 'AddressNotAssigned', message: 'the edge has no address left' },
        ],
        listeners: [{ name: 'tcp', conditions: [{ type: 'Programmed', status: 'False', reason: 'Pending', message: 'waiting for the address' }, { type: 'Conflicted', status: 'False', reason: 'NoConflicts' }] }],
      },
    },
  ];
  const events: ClusterEvent[] = [
    { type: 'Warning', reason: 'Old', message: 'older', involvedObject: { kind: 'Ingress', namespace: 'default', name: 'api' }, reportingComponent: 'tuna-operator', lastTimestamp: '2026-01-01T00:00:00Z' },
    { type: 'Warning', reason: 'AddressNotAssigned', message: 'newest', involvedObject: { kind: 'Ingress', namespace: 'default', name: 'api' }, source: { component: 'tuna-operator' }, lastTimestamp: '2026-02-01T00:00:00Z' },
    { type: 'Warning', reason: 'Other', message: 'not the operator', involvedObject: { kind: 'Ingress', namespace: 'default', name: 'site' }, reportingComponent: 'kubelet', lastTimestamp: '2026-03-01T00:00:00Z' },
    { type: 'Normal', reason: 'Sync', message: 'not a warning', involvedObject: { kind: 'Ingress', namespace: 'default', name: 'site' }, reportingComponent: 'tuna-operator', lastTimestamp: '2026-03-01T00:00:00Z' },
  ];

  it('lists each translated binding with the objects it came from, the held-back conditions, the newest operator Warning and the certificate expiry', () => {
    const cert = selfSignedCertificate(['www.example.com']);
    const report = buildClusterStatus({ source: 'https://127.0.0.1:6443', objects, events, certificates: new Map([['default/www-tls', cert.cert]]), baseDomain: 'tuna.test' });
    const expiry = report.bindings.find((b) => b.id === 'binding/host/www.example.com')?.certificateExpiresAt ?? 0;
    // the test certificate is valid for 2 days from now (openssl -days 2)
    expect(expiry).to.be.within(Date.now() + 2 * 86400_000 - 3600_000, Date.now() + 2 * 86400_000 + 3600_000);
    expect(report.bindings).to.deep.equal([
      binding({
        id: 'binding/address/infra/gw',
        kind: 'address',
        addresses: ['(unassigned):5432/tcp'],
        from: ['Gateway/infra/gw'],
        heldBack: ['Gateway/infra/gw: Programmed=False AddressNotAssigned: the edge has no address left', 'Gateway/infra/gw listener tcp: Programmed=False Pending: waiting for the address'],
      }),
      binding({
        id: 'binding/host/www.example.com',
        kind: 'host',
        addresses: ['www.example.com'],
        from: ['Ingress/default/site', 'Ingress/default/api'],
        certificateExpiresAt: expiry,
        lastError: 'AddressNotAssigned: newest',
      }),
    ]);
    expect(report.notes).to.deep.equal(["tunnel connections are not in the cluster's objects: tuna status --edge shows them"]);
  });

  it('leaves the certificate expiry unknown when the Secret was not read', () => {
    const report = buildClusterStatus({ source: 's', objects, events: [], certificates: new Map(), baseDomain: 'tuna.test', notes: ['Secret default/www-tls not read: HTTP 403'] });
    expect(report.bindings.find((b) => b.kind === 'host')).to.deep.include({ certificateExpiresAt: null, lastError: null });
    expect(report.notes[0]).to.equal('Secret default/www-tls not read: HTTP 403');
  });
});
