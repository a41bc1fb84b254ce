/**
 * The Grafana dashboard (deploy/grafana/payments-dashboard.json) and the Prometheus alert rules
 * (deploy/prometheus/alerts.yaml) name only metrics the apps declare. The declared names are not
 * a hand-kept list: every app's metric definitions are created here on an empty registry, the
 * way the apps create them (libs/observability's get-or-create factory on prom-client's default
 * registry, which jest gives each test file anew), and read back from it.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { register } from 'prom-client';
import { parse } from 'yaml';
import { kafkaConsumerMetrics } from '@payments/kafka/metrics';
import { ObservabilityModule } from '@payments/observability';
import { callbackMetrics } from '../apps/callback-ingest/src/application/metrics';
import { adapterMetrics } from '../apps/gateway-adapter/src/application/metrics';
import { outboxMetrics } from '../apps/orchestrator/src/runtime/outbox/outbox-metrics';
import { sagaGaugeMetrics } from '../apps/orchestrator/src/application/queries/saga-gauges';
import { outcomeMetrics } from '../apps/orchestrator/src/runtime/outcome-metrics';

const ROOT = resolve(__dirname, '..');
const DASHBOARD = join(ROOT, 'deploy/grafana/payments-dashboard.json');
const ALERTS = join(ROOT, 'deploy/prometheus/alerts.yaml');

// ---- the declared metrics ----------------------------------------------------------------------

/** Metric name → prom-client type, of every metric the apps and libraries declare. */
async function declaredMetrics(): Promise<Map<string, string>> {
  register.clear();
  ObservabilityModule.forRoot({ service: 'observability-files-test' }); // process metrics, every app
  kafkaConsumerMetrics(); // every consumer: orchestrator, gateway-adapter
  outboxMetrics(); // orchestrator
  outcomeMetrics();
  sagaGaugeMetrics();
  adapterMetrics(); // gateway-adapter
  callbackMetrics(); // callback-ingest
  const metrics = await register.getMetricsAsJSON();
  return new Map(metrics.map((m) => [m.name, String(m.type)]));
}

/** The names a series may have: a histogram's or summary's also end in _bucket, _sum, _count. */
function undeclared(used: Iterable<string>, declared: ReadonlyMap<string, string>): string[] {
  const known = (name: string) => {
    if (declared.has(name)) return true;
    const base = /^(.*)_(bucket|sum|count)$/.exec(name);
    const type = base?.[1] === undefined ? undefined : declared.get(base[1]);
    return type === 'histogram' || (type === 'summary' && base?.[2] !== 'bucket');
  };
  return [...new Set(used)].filter((name) => !known(name)).sort();
}

// ---- metric names in PromQL --------------------------------------------------------------------

/** Words of PromQL that look like names but are not metrics. */
const PROMQL_WORDS = new Set([
  'and',
  'or',
  'unless',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'offset',
  'inf',
  'nan',
]);

/**
 * The metric names an expression selects: strings, Grafana variables, label matchers, ranges,
 * label lists (by, without, on, ignoring, group_left/right) and offsets are removed; what remains
 * are names, of which those called (followed by `(`) are functions or aggregations, and the rest
 * metrics unless they are PromQL words.
 */
export function metricNamesIn(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, ' ')
    .replace(/\$\{[^}]*\}|\$\w+/g, ' ')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\boffset\s+-?\w+/g, ' ')
    .replace(/@\s*[\w.()]+/g, ' ');
  const names = new Set<string>();
  for (const [name] of stripped.matchAll(/(?<![\w:.])[a-zA-Z_:][\w:]*(?![\w:])(?!\s*\()/g)) {
    if (!PROMQL_WORDS.has(name.toLowerCase())) names.add(name);
  }
  return [...names];
}

type Json = Record<string, unknown>;
const isJson = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** Every panel of a dashboard, those inside collapsed rows included. */
function panelsOf(dashboard: Json): Json[] {
  return list(dashboard.panels)
    .filter(isJson)
    .flatMap((p) => [p, ...list(p.panels).filter(isJson)]);
}

/**
 * The PromQL of a dashboard: every panel target's `expr`, and the queries of its template
 * variables (`label_values(<expr>, label)` names a label after the expression).
 */
function dashboardExpressions(dashboard: Json): string[] {
  const targets = panelsOf(dashboard).flatMap((p) => list(p.targets).filter(isJson));
  const variables = list(isJson(dashboard.templating) ? dashboard.templating.list : [])
    .filter(isJson)
    .filter((v) => v.type === 'query')
    .map((v) => (isJson(v.query) ? v.query.query : v.query))
    .filter((q): q is string => typeof q === 'string')
    .map((q) => q.replace(/label_values\(\s*(?:([^,]*),)?[^,)]*\)/, '$1'));
  return [
    ...targets.map((t) => t.expr).filter((e): e is string => typeof e === 'string'),
    ...variables,
  ];
}

function ruleGroups(rules: Json): Json[] {
  return list(rules.groups).filter(isJson);
}

function rulesOf(rules: Json): Json[] {
  return ruleGroups(rules).flatMap((g) => list(g.rules).filter(isJson));
}

const alertExpressions = (rules: Json): string[] =>
  rulesOf(rules)
    .map((r) => r.expr)
    .filter((e): e is string => typeof e === 'string');

const namesIn = (expressions: readonly string[]): string[] => expressions.flatMap(metricNamesIn);

// ---- the files -------------------------------------------------------------------------------

const readDashboard = (): Json => JSON.parse(readFileSync(DASHBOARD, 'utf8')) as Json;
const readAlerts = (): Json => {
  const parsed: unknown = parse(readFileSync(ALERTS, 'utf8'));
  if (!isJson(parsed)) throw new Error('alerts.yaml is not a mapping');
  return parsed;
};

describe('metric names in PromQL', () => {
  it.each([
    ['orchestrator_outbox_backlog', ['orchestrator_outbox_backlog']],
    [
      'sum by (flow, type) (rate(orchestrator_saga_events_total{flow="card-payment", type=~"approved|declined"}[$__rate_interval]))',
      ['orchestrator_saga_events_total'],
    ],
    [
      'histogram_quantile(0.95, sum by (le, operation) (rate(gateway_adapter_call_duration_seconds_bucket[5m])))',
      ['gateway_adapter_call_duration_seconds_bucket'],
    ],
    [
      'sum(rate(a_total[5m] offset 1h)) / ignoring(reason) group_left sum without (x) (b_total) > bool 1e3',
      ['a_total', 'b_total'],
    ],
    ['max(x) > 3600 and on (endpoint) y == 2 unless z', ['x', 'y', 'z']],
    ['sum by (currency) (increase(m_total[$__range])) * 60', ['m_total']],
    ['max_over_time(up{job="a:b"}[1m:10s]) or vector(0)', ['up']],
    ['label_replace(m, "dst", "$1", "src", "(.*)")', ['m']],
    ['{__name__="hidden"}', []],
  ])('%s', (expr, names) => {
    expect(metricNamesIn(expr).sort()).toEqual([...names].sort());
  });

  it('reads a template variable label_values(<expr>, label) as its expression', () => {
    const dashboard = {
      panels: [],
      templating: {
        list: [
          {
            type: 'query',
            name: 'topic',
            query: { query: 'label_values(kafka_consumer_lag, topic)' },
          },
          { type: 'query', name: 'job', query: 'label_values(job)' },
          { type: 'datasource', name: 'datasource', query: 'prometheus' },
        ],
      },
    };
    expect(namesIn(dashboardExpressions(dashboard))).toEqual(['kafka_consumer_lag']);
  });
});

describe('dashboard and alert rules name only declared metrics', () => {
  let declared: Map<string, string>;

  beforeAll(async () => {
    declared = await declaredMetrics();
  });

  it('collects the declared metrics from the apps, not from a list', () => {
    for (const name of [
      'orchestrator_saga_events_total',
      'orchestrator_money_moved_minor_units_total',
      'orchestrator_unknown_outcome_oldest_seconds',
      'orchestrator_in_flight_oldest_seconds',
      'orchestrator_outbox_lag_seconds',
      'kafka_consumer_lag',
      'gateway_adapter_breaker_state',
      'callbacks_rejected_total',
      'process_cpu_seconds_total',
    ]) {
      expect(declared.has(name)).toBe(true);
    }
    expect(declared.get('gateway_adapter_call_duration_seconds')).toBe('histogram');
    expect(declared.get('orchestrator_time_to_truth_seconds')).toBe('histogram');
  });

  it('the dashboard', () => {
    const used = namesIn(dashboardExpressions(readDashboard()));
    expect(used.length).toBeGreaterThan(10);
    expect(undeclared(used, declared)).toEqual([]);
  });

  it('the alert rules', () => {
    const used = namesIn(alertExpressions(readAlerts()));
    expect(used.length).toBeGreaterThan(3);
    expect(undeclared(used, declared)).toEqual([]);
  });

  it('fails on a metric that does not exist, and on a histogram suffix of a non-histogram', () => {
    const dashboard = readDashboard();
    const [panel] = panelsOf(dashboard).filter((p) => Array.isArray(p.targets));
    list(panel?.targets).push({ expr: 'sum(rate(orchestrator_payments_bogus_total[5m]))' });
    expect(undeclared(namesIn(dashboardExpressions(dashboard)), declared)).toEqual([
      'orchestrator_payments_bogus_total',
    ]);

    const alerts = readAlerts();
    list(ruleGroups(alerts)[0]?.rules).push({ alert: 'X', expr: 'kafka_consumer_lag_bucket > 1' });
    expect(undeclared(namesIn(alertExpressions(alerts)), declared)).toEqual([
      'kafka_consumer_lag_bucket',
    ]);
  });

  it('covers the business metrics and the key technical ones on the dashboard', () => {
    const used = new Set(namesIn(dashboardExpressions(readDashboard())));
    for (const name of [
      'orchestrator_saga_events_total',
      'orchestrator_money_moved_minor_units_total',
      'orchestrator_unknown_outcomes',
      'orchestrator_unknown_outcome_oldest_seconds',
      'orchestrator_time_to_truth_seconds_bucket',
      'orchestrator_in_flight_operations',
      'orchestrator_in_flight_oldest_seconds',
      'orchestrator_payouts_awaiting_approval',
      'orchestrator_schedule_charges_due',
      'orchestrator_schedule_charges_failed',
      'kafka_consumer_lag',
      'kafka_consumer_messages_dead_lettered_total',
      'orchestrator_outbox_backlog',
      'orchestrator_outbox_lag_seconds',
      'gateway_adapter_calls_total',
      'gateway_adapter_breaker_state',
      'gateway_adapter_status_admissions_total',
      'callbacks_rejected_total',
    ]) {
      expect(used).toContain(name);
    }
  });
});

describe('the dashboard file', () => {
  const dashboard = readDashboard();

  it('is a Grafana dashboard on a Prometheus datasource variable', () => {
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(39);
    expect(typeof dashboard.uid).toBe('string');
    const variables = list(isJson(dashboard.templating) ? dashboard.templating.list : []);
    expect(variables).toContainEqual(
      expect.objectContaining({ name: 'datasource', type: 'datasource', query: 'prometheus' }),
    );
  });

  it('has unique panel ids, a place for each, and every query on the datasource variable', () => {
    const panels = panelsOf(dashboard);
    const ids = panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const panel of panels) {
      expect(panel.gridPos).toEqual(
        expect.objectContaining({ h: expect.any(Number), w: expect.any(Number) }),
      );
      if (panel.type === 'row') continue;
      expect(panel.datasource).toEqual({ type: 'prometheus', uid: '${datasource}' });
      expect(list(panel.targets).length).toBeGreaterThan(0);
      for (const target of list(panel.targets).filter(isJson)) {
        expect(target.datasource).toEqual({ type: 'prometheus', uid: '${datasource}' });
        expect(target.expr).toEqual(expect.any(String));
      }
    }
  });
});

/** The anchors a Markdown file's headings get (GitHub's: lower case, punctuation dropped, spaces as -). */
function headingAnchors(markdown: string): string[] {
  return [...markdown.matchAll(/^#{1,6}\s+(.+?)\s*$/gm)].map(([, title]) =>
    (title ?? '')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-'),
  );
}

describe('the alert rules file', () => {
  const alerts = readAlerts();
  const runbook = readFileSync(join(ROOT, 'docs/operations.md'), 'utf8');

  it('has the alerts operators need, each with for, severity, summary, description and runbook', () => {
    const rules = rulesOf(alerts);
    for (const rule of rules) {
      expect(rule).toEqual(
        expect.objectContaining({
          alert: expect.stringMatching(/^Payments[A-Z]\w+$/),
          expr: expect.any(String),
          for: expect.stringMatching(/^\d+[smh]$/),
          labels: expect.objectContaining({
            severity: expect.stringMatching(/^(warning|critical)$/),
          }),
          annotations: expect.objectContaining({
            summary: expect.any(String),
            description: expect.any(String),
            runbook: 'docs/operations.md#alerts',
          }),
        }),
      );
    }
    const exprOf = (metric: string) => rules.find((r) => String(r.expr).includes(metric))?.expr;
    expect(exprOf('orchestrator_unknown_outcome_oldest_seconds')).toMatch(/> 3600$/);
    expect(exprOf('kafka_consumer_messages_dead_lettered_total')).toMatch(/increase\(/);
    expect(exprOf('gateway_adapter_breaker_state')).toMatch(/== 2$/);
    expect(exprOf('orchestrator_outbox_lag_seconds')).toEqual(expect.any(String));
    expect(exprOf('orchestrator_time_to_truth_seconds_bucket')).toMatch(
      /^histogram_quantile\(0\.99, .*\[10m\].*\) > 10$/,
    );
    expect(exprOf('orchestrator_in_flight_oldest_seconds')).toMatch(/> 3600$/);
  });

  it('links every rule to a heading that exists in its runbook file', () => {
    for (const rule of rulesOf(alerts)) {
      const link = String(isJson(rule.annotations) ? rule.annotations.runbook : '');
      const [file, anchor] = link.split('#');
      const text = readFileSync(join(ROOT, file ?? ''), 'utf8');
      expect(headingAnchors(text)).toContain(anchor);
    }
    expect(headingAnchors('## Alerts\n### The operator CLI (`payments`)\n')).toEqual([
      'alerts',
      'the-operator-cli-payments',
    ]);
  });

  it('points at a runbook section that exists and names every alert', () => {
    expect(runbook).toMatch(/^## Alerts$/m);
    const section = runbook.split(/^## Alerts$/m)[1]?.split(/^## /m)[0] ?? '';
    const missing = rulesOf(alerts)
      .map((rule) => String(rule.alert))
      .filter((alert) => !section.includes(alert));
    expect(missing).toEqual([]);
  });
});
