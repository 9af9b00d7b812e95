/**
 * The monitoring objects of charts/tuna and charts/tuna-edge, rendered by Helm (hack/helm.sh):
 * ServiceMonitor, PodMonitor, the Grafana dashboard ConfigMap and the PrometheusRule, each on and
 * off, the values' schema refusing bad ones; and every PromQL expression of the dashboards and the
 * alerts parsed, each metric it names checked against the series the code's own prom-client
 * registries export (no list kept by hand).
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { EdgeMetrics } from '../../src/edge/index.js';
import { OperatorHealth, RequestMetrics, UdpMetrics } from '../../src/operator/index.js';
import { CHART, EDGE_CHART, ensureHelm, helmFails, parseManifests, runHelm, setFlags } from '../support/helm.js';
import type { KubeObject } from '../support/helm.js';
import { exportedSeries, selectorsOf } from '../support/promql.js';

type Values = Record<string, string | number | boolean>;
interface Rule {
  alert: string;
  expr: string;
  for: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}
interface Panel {
  type: string;
  title: string;
  targets?: { expr: string }[];
  panels?: Panel[];
}
interface Dashboard {
  uid: string;
  title: string;
  panels: Panel[];
  templating: { list: { name: string; query?: string | { query: string } }[] };
}

/** ChartCase is one chart and what its monitoring objects are called. */
interface ChartCase {
  name: string;
  path: string;
  release: string;
  namespace: string;
  required: Values;
  fullname: string;
  dashboardKey: string;
  alerts: string[];
}

const CHARTS: ChartCase[] = [
  {
    name: 'charts/tuna',
    path: CHART,
    release: 'tuna',
    namespace: 'tuna-system',
    required: { 'edge.address': 'edge.example.com:7443', 'credentials.apiKey': 'tuna_ak_test' },
    fullname: 'tuna-operator',
    dashboardKey: 'tuna-operator.json',
    alerts: ['TunaBindingWithoutTunnel', 'TunaSyncFailing', 'TunaEdgeUnreachable', 'TunaCertificateExpiringSoon', 'TunaOperatorNotReady'],
  },
  {
    name: 'charts/tuna-edge',
    path: EDGE_CHART,
    release: 'tuna',
    namespace: 'tuna-edge',
    required: { baseDomain: 'tuna.example.com', 'tls.tunnel.secretName': 'edge-tunnel-tls' },
    fullname: 'tuna-edge',
    dashboardKey: 'tuna-edge.json',
    alerts: ['TunaEdgeNoTunnel', 'TunaEdgeHighErrorRate', 'TunaEdgeCertificateExpiringSoon', 'TunaEdgeBindingListenersFailing'],
  },
];

const EVERYTHING: Values = { 'metrics.serviceMonitor.enabled': true, 'dashboards.enabled': true, 'alerts.enabled': true };

const kinds = (objects: KubeObject[], ...names: string[]): KubeObject[] => objects.filter((o) => names.includes(o.kind));
const only = (objects: KubeObject[], kind: string): KubeObject => {
  const found = kinds(objects, kind);
  expect(found, kind).to.have.length(1);
  return found[0]!;
};
const rulesOf = (rule: KubeObject): Rule[] => (rule.spec as { groups: { rules: Rule[] }[] }).groups.flatMap((g) => g.rules);
const dashboardOf = (objects: KubeObject[], key: string): Dashboard => {
  const configMaps = objects.filter((o) => o.kind === 'ConfigMap' && o.metadata.labels?.grafana_dashboard === '1');
  expect(configMaps, 'the dashboard ConfigMap').to.have.length(1);
  return JSON.parse((configMaps[0]!.data as Record<string, string>)[key]!) as Dashboard;
};
const panelsOf = (panels: Panel[]): Panel[] => panels.flatMap((p) => [p, ...panelsOf(p.panels ?? [])]);

/**
 * dashboardQueries is every PromQL query of a dashboard: each panel target, and the metric of each
 * `label_values(metric, label)` variable (as a selector). Grafana's `$__rate_interval` becomes a
 * duration; `$namespace` sits inside a quoted matcher and stays.
 */
function dashboardQueries(dashboard: Dashboard): string[] {
  const targets = panelsOf(dashboard.panels).flatMap((p) => (p.targets ?? []).map((t) => t.expr));
  const variables = dashboard.templating.list.flatMap((v) => {
    const query = typeof v.query === 'string' ? v.query : v.query?.query;
    const m = /^label_values\((.+),\s*[A-Za-z_]+\)$/.exec(query ?? '');
    return m === null ? [] : [m[1]!];
  });
  return [...targets, ...variables].map((q) => q.replaceAll('$__rate_interval', '5m'));
}

/** codeSeries is every series name the code's registries export: the edge's EdgeMetrics, the operator's OperatorHealth with the data plane's parts (as src/operator/process.ts builds it). */
async function codeSeries(): Promise<Map<string, string>> {
  const edge = await new EdgeMetrics().render({ count: () => new Map(), bytes: () => ({ in: 0, out: 0 }) });
  const operator = await new OperatorHealth({ hasSynced: () => true, tunnels: () => [], isLeader: () => true }, Date.now, [new RequestMetrics().registry, new UdpMetrics().registry]).metrics();
  return exportedSeries(`${edge}\n${operator}`);
}

describe('charts/tuna and charts/tuna-edge: monitoring (helm template)', function () {
  this.timeout(600_000);
  let helm: string;

  const template = async (chart: ChartCase, set: Values): Promise<KubeObject[]> =>
    parseManifests(await runHelm(helm, ['template', chart.release, chart.path, '--namespace', chart.namespace, ...setFlags({ ...chart.required, ...set })]));
  const refusal = (chart: ChartCase, set: Values): Promise<string> => helmFails(helm, ['template', chart.release, chart.path, ...setFlags({ ...chart.required, ...set })]);

  before(async () => {
    helm = await ensureHelm();
  });

  for (const chart of CHARTS) {
    describe(chart.name, () => {
      it('renders no ServiceMonitor, PodMonitor, PrometheusRule or dashboard by default, and passes helm lint --strict with all of them on', async () => {
        const objects = await template(chart, {});
        expect(kinds(objects, 'ServiceMonitor', 'PodMonitor', 'PrometheusRule')).to.deep.equal([]);
        expect(objects.filter((o) => o.metadata.labels?.grafana_dashboard !== undefined)).to.deep.equal([]);
        expect(await runHelm(helm, ['lint', chart.path, '--strict', ...setFlags({ ...chart.required, ...EVERYTHING })])).to.include('0 chart(s) failed');
      });

      it('scrapes the metrics Service with metrics.serviceMonitor.enabled: its interval, timeout and labels, selecting that Service alone', async () => {
        const objects = await template(chart, { 'metrics.serviceMonitor.enabled': true, 'metrics.serviceMonitor.interval': '15s', 'metrics.serviceMonitor.scrapeTimeout': '10s', 'metrics.serviceMonitor.labels.release': 'prom' });
        const monitor = only(objects, 'ServiceMonitor') as KubeObject & { spec: { selector: { matchLabels: Record<string, string> }; namespaceSelector: unknown; endpoints: unknown[] } };
        expect(monitor.apiVersion).to.equal('monitoring.coreos.com/v1');
        expect(monitor.metadata).to.deep.include({ name: chart.fullname, namespace: chart.namespace });
        expect(monitor.metadata.labels).to.include({ release: 'prom' });
        expect(monitor.spec.namespaceSelector).to.deep.equal({ matchNames: [chart.namespace] });
        expect(monitor.spec.endpoints).to.deep.equal([{ port: 'metrics', path: '/metrics', interval: '15s', scrapeTimeout: '10s' }]);
        const selected = kinds(objects, 'Service').filter((s) => Object.entries(monitor.spec.selector.matchLabels).every(([k, v]) => s.metadata.labels?.[k] === v));
        expect(selected.map((s) => s.metadata.name)).to.deep.equal([`${chart.fullname}-metrics`]);
        const ports = (selected[0]!.spec as { ports: { name: string; targetPort: string }[] }).ports;
        expect(ports.map((p) => [p.name, p.targetPort])).to.deep.equal([['metrics', 'metrics']]);
      });

      it('scrapes the pods’ metrics port with metrics.podMonitor.enabled', async () => {
        const objects = await template(chart, { 'metrics.podMonitor.enabled': true, 'metrics.podMonitor.labels.release': 'prom' });
        expect(kinds(objects, 'ServiceMonitor')).to.deep.equal([]);
        const monitor = only(objects, 'PodMonitor') as KubeObject & { spec: { selector: { matchLabels: Record<string, string> }; podMetricsEndpoints: unknown[] } };
        expect(monitor.metadata.labels).to.include({ release: 'prom' });
        expect(monitor.spec.podMetricsEndpoints).to.deep.equal([{ port: 'metrics', path: '/metrics', interval: '30s' }]);
        const pod = (only(objects, 'Deployment').spec as { template: { metadata: { labels: Record<string, string> }; spec: { containers: { ports: { name: string }[] }[] } } }).template;
        expect(pod.metadata.labels).to.include(monitor.spec.selector.matchLabels);
        expect(pod.spec.containers[0]!.ports.map((p) => p.name)).to.include('metrics');
      });

      it('ships the dashboard in a ConfigMap labelled grafana_dashboard "1" with dashboards.enabled, the chart file unchanged', async () => {
        const objects = await template(chart, { 'dashboards.enabled': true, 'dashboards.namespace': 'grafana', 'dashboards.annotations.grafana_folder': 'tuna' });
        const configMap = objects.find((o) => o.metadata.labels?.grafana_dashboard === '1')!;
        expect(configMap, 'the dashboard ConfigMap').to.not.equal(undefined);
        expect(configMap.metadata).to.deep.include({ name: `${chart.fullname}-dashboard`, namespace: 'grafana', annotations: { grafana_folder: 'tuna' } });
        const text = (configMap.data as Record<string, string>)[chart.dashboardKey]!;
        expect(text.trim()).to.equal(readFileSync(join(chart.path, 'dashboards', chart.dashboardKey), 'utf8').trim());
        const dashboard = JSON.parse(text) as Dashboard;
        expect(dashboard.uid).to.equal(chart.dashboardKey.replace('.json', ''));
        expect(panelsOf(dashboard.panels).filter((p) => p.type !== 'row').length).to.be.greaterThan(10);
      });

      it('renders the PrometheusRule with alerts.enabled: each alert with for, severity and a runbook; the selector, expiry days and runbook URL applied', async () => {
        const rules = rulesOf(only(await template(chart, { 'alerts.enabled': true, 'alerts.labels.release': 'prom', 'alerts.additionalLabels.team': 'platform' }), 'PrometheusRule'));
        expect(rules.map((r) => r.alert)).to.deep.equal(chart.alerts);
        for (const rule of rules) {
          expect(rule.for, rule.alert).to.match(/^\d+[mh]$/);
          expect(rule.labels, rule.alert).to.deep.equal({ severity: rule.labels.severity, team: 'platform' });
          expect(['critical', 'warning'], rule.alert).to.include(rule.labels.severity);
          expect(rule.annotations.summary, rule.alert).to.be.a('string').and.not.equal('');
          expect(rule.annotations.description, rule.alert).to.be.a('string').and.not.equal('');
          expect(rule.annotations.runbook, rule.alert).to.include(`docs/observability.md#${rule.alert.toLowerCase()}`);
          expect(rule.annotations.runbook_url, 'no runbook_url without alerts.runbookBaseUrl').to.equal(undefined);
          expect(rule.expr, rule.alert).to.include(`namespace="${chart.namespace}"`);
        }
        const tuned = rulesOf(only(await template(chart, { 'alerts.enabled': true, 'alerts.selector': 'job="tuna"\\, cluster="eu"', 'alerts.certificateExpiryDays': 30, 'alerts.runbookBaseUrl': 'https://docs.example/observability/' }), 'PrometheusRule'));
        for (const rule of tuned) {
          expect(rule.expr, rule.alert).to.include('job="tuna", cluster="eu"').and.not.include('namespace="');
          expect(rule.annotations.runbook_url).to.equal(`https://docs.example/observability#${rule.alert.toLowerCase()}`);
        }
        expect(tuned.find((r) => r.alert.endsWith('CertificateExpiringSoon'))!.expr).to.match(/< 2592000$/);
      });

      it('lists every monitoring value (metrics.*, dashboards.*, alerts.*) in the chart README’s table', () => {
        const values = parseYaml(readFileSync(join(chart.path, 'values.yaml'), 'utf8')) as Record<string, unknown>;
        const leaves = (node: unknown, prefix: string): string[] =>
          node !== null && typeof node === 'object' && !Array.isArray(node) && Object.keys(node).length > 0 ? Object.entries(node).flatMap(([k, v]) => leaves(v, `${prefix}.${k}`)) : [prefix];
        const paths = ['metrics', 'dashboards', 'alerts'].flatMap((key) => leaves(values[key], key));
        expect(paths.length).to.be.greaterThan(15);
        const readme = readFileSync(join(chart.path, 'README.md'), 'utf8');
        for (const path of paths) expect(readme, `${path} in ${chart.name}/README.md`).to.include(`| \`${path}\` |`);
      });

      it('refuses both monitors at once, a ServiceMonitor without the metrics Service, and values of the wrong shape, naming them', async () => {
        expect(await refusal(chart, { 'metrics.serviceMonitor.enabled': true, 'metrics.podMonitor.enabled': true })).to.include('enable one');
        expect(await refusal(chart, { 'metrics.serviceMonitor.enabled': true, 'metrics.service.enabled': false })).to.include('metrics.serviceMonitor.enabled needs metrics.service.enabled');
        expect(await refusal(chart, { 'metrics.serviceMonitor.interval': 'often' })).to.include("at '/metrics/serviceMonitor/interval'");
        expect(await refusal(chart, { 'metrics.podMonitor.enabled': 'yes' })).to.include("at '/metrics/podMonitor/enabled'");
        expect(await refusal(chart, { 'alerts.certificateExpiryDays': 0 })).to.include("at '/alerts/certificateExpiryDays'");
        expect(await refusal(chart, { 'alerts.selector': 'namespace=tuna' })).to.include("at '/alerts/selector'");
        expect(await refusal(chart, { 'alerts.runbookBaseUrl': 'docs.example' })).to.include("at '/alerts/runbookBaseUrl'");
        expect(await refusal(chart, { 'dashboards.enable': true })).to.include("additional properties 'enable' not allowed");
      });
    });
  }

  describe('the PromQL of the dashboards and alerts', () => {
    let series: Map<string, string>;
    before(async () => {
      series = await codeSeries();
    });

    /** checkQuery parses one expression and holds each metric it names to the code's series: present, a rate over a counter or histogram series, a quantile over _bucket. */
    const checkQuery = (where: string, query: string): string[] => {
      const selectors = selectorsOf(query);
      expect(selectors, `${where}: ${query} names a metric`).to.not.deep.equal([]);
      for (const { name, within } of selectors) {
        expect(series.has(name), `${where}: ${name} (in ${query}) is not a metric the code exports`).to.equal(true);
        if (['rate', 'irate', 'increase'].includes(within[0] ?? '')) expect(['counter', 'histogram'], `${where}: ${within[0]}(${name}) of a ${series.get(name)}`).to.include(series.get(name));
        if (within.includes('histogram_quantile')) expect(name, `${where}: histogram_quantile over ${name}`).to.match(/_bucket$/);
      }
      return selectors.map((s) => s.name);
    };

    it('exports the metrics the alerts need (read from the code’s registries, not a list)', () => {
      for (const name of ['tuna_operator_binding_tunnel_connections', 'tuna_operator_edge_unreachable_total', 'tuna_operator_certificate_expiry_timestamp_seconds', 'tuna_edge_certificate_expiry_timestamp_seconds', 'tuna_edge_answers_total', 'tuna_edge_request_duration_seconds_bucket'])
        expect(series.get(name), name).to.not.equal(undefined);
    });

    for (const chart of CHARTS) {
      it(`${chart.name}: parses every rule and dashboard query, each metric one the code exports`, async () => {
        const objects = await template(chart, EVERYTHING);
        const used = new Set<string>();
        for (const rule of rulesOf(only(objects, 'PrometheusRule'))) for (const name of checkQuery(`${chart.name} alert ${rule.alert}`, rule.expr)) used.add(name);
        const dashboard = dashboardOf(objects, chart.dashboardKey);
        const queries = dashboardQueries(dashboard);
        expect(queries.length).to.be.greaterThan(15);
        for (const query of queries) for (const name of checkQuery(`${chart.name} dashboard`, query)) used.add(name);
        const prefix = chart.path === CHART ? 'tuna_operator_' : 'tuna_edge_';
        expect([...used].filter((n) => !n.startsWith(prefix)), 'each chart watches its own component').to.deep.equal([]);
      });
    }
  });
});
