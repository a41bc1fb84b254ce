/**
 * The Helm chart checked by the real tools: Helm itself (helm-java, through
 * scripts/helm-check.sh) lints the chart strictly and renders it with every value set in
 * deploy/helm/check/values/ — validating each against values.schema.json — and every rendered
 * manifest, plus the operator examples in deploy/operators/, is validated against the Kubernetes
 * 1.34 API schemas (scripts/validate-manifests.ts). Then what each value set is for is asserted on
 * the rendered objects, and both checks are shown to refuse what they exist to refuse.
 *
 * No broker or database is used; it sits in the integration tier because it starts a JVM and
 * resolves helm-java from Maven on a fresh machine.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';

const ROOT = join(__dirname, '..');
const VALUES_DIR = join(ROOT, 'deploy/helm/check/values');
const OPERATORS_DIR = join(ROOT, 'deploy/operators');

interface Run {
  readonly code: number;
  readonly output: string;
}

function run(command: string, args: readonly string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd: ROOT, timeout: 240_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
      resolve({ code, output: `${stdout}${stderr}` });
    });
  });
}

const helmCheck = (out: string, ...values: string[]): Promise<Run> =>
  run('bash', [join(ROOT, 'scripts/helm-check.sh'), out, ...values]);

const validate = (...files: string[]): Promise<Run> =>
  run(process.execPath, [
    join(ROOT, 'node_modules/tsx/dist/cli.mjs'),
    join(ROOT, 'scripts/validate-manifests.ts'),
    ...files,
  ]);

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; annotations?: Record<string, string> };
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
}

const SETS = readdirSync(VALUES_DIR)
  .filter((f) => f.endsWith('.yaml'))
  .map((f) => f.replace(/\.yaml$/, ''))
  .sort();

let outDir: string;
let render: Run;
const rendered = new Map<string, K8sObject[]>();

function objects(file: string): K8sObject[] {
  return parseAllDocuments(readFileSync(file, 'utf8'))
    .map((d) => d.toJS() as K8sObject | null)
    .filter((o): o is K8sObject => o !== null && o !== undefined);
}

function find(set: string, kind: string, name: string): K8sObject {
  const found = (rendered.get(set) ?? []).find((o) => o.kind === kind && o.metadata.name === name);
  if (found === undefined) throw new Error(`${set}: no ${kind} ${name}`);
  return found;
}

const kinds = (set: string, kind: string): string[] =>
  (rendered.get(set) ?? [])
    .filter((o) => o.kind === kind)
    .map((o) => o.metadata.name)
    .sort();

/** The container of a Deployment/Job pod template. */
function container(o: K8sObject): Record<string, unknown> {
  const template = o.spec?.template as { spec: { containers: Record<string, unknown>[] } };
  return template.spec.containers[0];
}

function secretRefs(o: K8sObject): string[] {
  const env = (container(o).env ?? []) as { valueFrom?: { secretKeyRef?: { name: string } } }[];
  return env.flatMap((e) => (e.valueFrom?.secretKeyRef ? [e.valueFrom.secretKeyRef.name] : []));
}

beforeAll(async () => {
  outDir = mkdtempSync(join(tmpdir(), 'helm-check-'));
  render = await helmCheck(outDir);
  for (const set of SETS) {
    const file = join(outDir, `${set}.yaml`);
    try {
      rendered.set(set, objects(file));
    } catch {
      rendered.set(set, []);
    }
  }
}, 300_000);

afterAll(() => rmSync(outDir, { recursive: true, force: true }));

describe('the chart, by Helm', () => {
  it('lints strictly and renders every value set (each checked against values.schema.json)', () => {
    expect(render.output).toContain('[helm lint] ok (strict)');
    for (const set of SETS) expect(render.output).toContain(`[helm template] ${set}: ok`);
    expect(render.code).toBe(0);
    expect(SETS).toEqual(
      expect.arrayContaining([
        'defaults',
        'sandbox',
        'migrations-job',
        'autoscaling',
        'existing-secrets',
        'operators',
        'console',
        'external-ha',
      ]),
    );
  });

  it('refuses a misspelt value (values.schema.json) and names it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'helm-bad-'));
    try {
      const bad = join(dir, 'misspelt.yaml');
      writeFileSync(bad, 'orchestrator:\n  replica: 3\ngatewayAdapter:\n  port: "http"\n');
      const result = await helmCheck(join(dir, 'out'), bad);
      expect(result.code).not.toBe(0);
      expect(result.output).toContain('[helm template] misspelt: FAILED');
      expect(result.output).toMatch(/additional properties 'replica' not allowed/);
      expect(result.output).toMatch(/gatewayAdapter\/port/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the manifests, against the Kubernetes 1.34 API schemas', () => {
  it('every rendered object and every operator example is valid', async () => {
    const files = [
      ...SETS.map((s) => join(outDir, `${s}.yaml`)),
      ...readdirSync(OPERATORS_DIR)
        .filter((f) => f.endsWith('.yaml'))
        .map((f) => join(OPERATORS_DIR, f)),
    ];
    const result = await validate(...files);
    expect(result.output).not.toContain('INVALID');
    const total = SETS.reduce((n, s) => n + (rendered.get(s) ?? []).length, 0) + 4;
    expect(result.output).toContain(
      `[manifests] ${total}/${total} valid in ${files.length} file(s)`,
    );
    expect(result.code).toBe(0);
  });

  it('the validator refuses a wrong type and an unknown kind', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'manifests-bad-'));
    try {
      const bad = join(dir, 'bad.yaml');
      writeFileSync(
        bad,
        [
          'apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec:\n  ports: [{port: "http"}]',
          'apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}',
        ].join('\n---\n'),
      );
      const result = await validate(bad);
      expect(result.code).toBe(1);
      expect(result.output).toMatch(/v1\/Service s: INVALID: .*port must be integer/);
      expect(result.output).toMatch(/Widget w: INVALID: .*no schema/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('what each value set is for', () => {
  const APPS = ['payments-callback-ingest', 'payments-gateway-adapter', 'payments-orchestrator'];

  it('defaults: the three apps with fixed replicas, no sandbox, no autoscaler, no Job', () => {
    expect(kinds('defaults', 'Deployment')).toEqual(APPS);
    for (const app of APPS) expect(find('defaults', 'Deployment', app).spec?.replicas).toBe(2);
    expect(kinds('defaults', 'HorizontalPodAutoscaler')).toEqual([]);
    expect(kinds('defaults', 'ScaledObject')).toEqual([]);
    expect(kinds('defaults', 'Job')).toEqual([]);
  });

  it('sandbox: the gateway sandbox runs beside the apps', () => {
    expect(kinds('sandbox', 'Deployment')).toEqual([...APPS, 'payments-gateway-sandbox'].sort());
    expect(find('sandbox', 'ConfigMap', 'payments-gateway-sandbox').data).toMatchObject({
      SANDBOX_TEST_CONTROLS: 'true',
    });
  });

  it('console: the console runs beside the apps, pointed at the orchestrator Service; its session Secret is made at install only', () => {
    expect(kinds('console', 'Deployment')).toEqual([...APPS, 'payments-console'].sort());
    expect(kinds('defaults', 'Deployment')).not.toContain('payments-console');
    const url = String(
      find('console', 'ConfigMap', 'payments-console').data?.CONSOLE_ADMIN_API_URL,
    );
    expect(kinds('console', 'Service')).toContain(new URL(url).hostname);
    const secret = find('console', 'Secret', 'payments-console-session');
    // helm-java omits hooks from template output; scripts/helm-check.sh renders them under this key.
    expect(secret.metadata.annotations?.['helm-check.payments/hook']).toBe('pre-install');
    expect(secret.metadata.annotations?.['helm.sh/resource-policy']).toBe('keep');
    const env = JSON.stringify(find('console', 'Deployment', 'payments-console'));
    expect(env).toContain('CONSOLE_SESSION_SECRET_FILE');
    expect(env).toContain('payments-console-session');
  });

  it('migrations-job: a pre-install/pre-upgrade Job migrates, the orchestrator no longer does', () => {
    const [job] = (rendered.get('migrations-job') ?? []).filter((o) => o.kind === 'Job');
    // helm-java omits hooks from template output; scripts/helm-check.sh renders them under this key.
    expect(job?.metadata.annotations?.['helm-check.payments/hook']).toBe('pre-install,pre-upgrade');
    expect(find('migrations-job', 'ConfigMap', 'payments-orchestrator').data).toMatchObject({
      DATABASE_MIGRATE_ON_BOOT: 'false',
    });
  });

  it('autoscaling: CPU HPAs, a KEDA ScaledObject on consumer lag, no fixed replicas', () => {
    expect(kinds('autoscaling', 'HorizontalPodAutoscaler')).toEqual([
      'payments-callback-ingest',
      'payments-orchestrator',
    ]);
    const scaled = find('autoscaling', 'ScaledObject', 'payments-gateway-adapter');
    expect(scaled.spec).toMatchObject({
      scaleTargetRef: { name: 'payments-gateway-adapter' },
      triggers: expect.arrayContaining([
        expect.objectContaining({
          type: 'kafka',
          metadata: expect.objectContaining({ consumerGroup: 'gateway-adapter' }),
        }),
      ]),
    });
    for (const app of APPS)
      expect(find('autoscaling', 'Deployment', app).spec).not.toHaveProperty('replicas');
    expect(kinds('autoscaling', 'Ingress')).toEqual(['payments-callback-ingest']);
  });

  it('existing-secrets: every secret reference, the image digest and the service account are the given ones', () => {
    const orchestrator = find('existing-secrets', 'Deployment', 'payments-orchestrator');
    expect(secretRefs(orchestrator)).toEqual(['pg-orchestrator-app']);
    const adapter = find('existing-secrets', 'Deployment', 'payments-gateway-adapter');
    expect(secretRefs(adapter)).toEqual(['pg-adapter-app']);
    const volumes = (
      adapter.spec?.template as { spec: { volumes: { secret?: { secretName: string } }[] } }
    ).spec.volumes.flatMap((v) => (v.secret ? [v.secret.secretName] : []));
    expect(volumes.sort()).toEqual(['vault-card-sealing-key', 'vault-gateway-credentials']);
    expect(container(orchestrator).image).toMatch(/^registry\.internal\/payments@sha256:0123/);
    expect(kinds('existing-secrets', 'ServiceAccount')).toEqual([]);
    expect(
      (orchestrator.spec?.template as { spec: { serviceAccountName: string } }).spec
        .serviceAccountName,
    ).toBe('payments-runtime');
  });

  it('external-ha: the apps on a replicated PostgreSQL (multi-host URL Secrets) and a Kafka cluster of three (replication 3, min ISR 2), spread over nodes', () => {
    for (const app of ['payments-orchestrator', 'payments-gateway-adapter']) {
      const data = find('external-ha', 'ConfigMap', app).data ?? {};
      expect(String(data.KAFKA_BROKERS).split(',')).toHaveLength(3);
      expect(data).toMatchObject({ KAFKA_REPLICATION_FACTOR: '3', KAFKA_MIN_INSYNC_REPLICAS: '2' });
      expect(data.DATABASE_POOL_SIZE).toMatch(/^[1-9][0-9]*$/);
      const deployment = find('external-ha', 'Deployment', app);
      expect(deployment.spec?.replicas).toBe(3);
      const spec = (
        deployment.spec?.template as {
          spec: { topologySpreadConstraints?: { topologyKey: string }[] };
        }
      ).spec;
      expect(spec.topologySpreadConstraints?.map((c) => c.topologyKey)).toEqual([
        'kubernetes.io/hostname',
      ]);
      // Readiness (false while no primary is writable) takes a pod out; liveness never asks the database.
      expect(container(deployment).readinessProbe).toMatchObject({
        httpGet: { path: '/health/ready' },
      });
      expect(container(deployment).livenessProbe).toMatchObject({
        httpGet: { path: '/health/live' },
      });
    }
    expect(secretRefs(find('external-ha', 'Deployment', 'payments-orchestrator'))).toEqual([
      'payments-orchestrator-db-ha',
    ]);
    expect(secretRefs(find('external-ha', 'Deployment', 'payments-gateway-adapter'))).toEqual([
      'payments-adapter-db-ha',
    ]);
  });

  it('operators: the apps point at the Strimzi bootstrap Service and the CloudNativePG app Secrets of the examples', () => {
    const examples = readdirSync(OPERATORS_DIR)
      .filter((f) => f.endsWith('.yaml'))
      .flatMap((f) => objects(join(OPERATORS_DIR, f)));
    const kafka = examples.find((o) => o.kind === 'Kafka') as K8sObject & {
      metadata: { namespace: string };
    };
    const bootstrap = `${kafka.metadata.name}-kafka-bootstrap.${kafka.metadata.namespace}.svc:9092`;
    const clusters = examples
      .filter((o) => o.kind === 'Cluster')
      .map((o) => `${o.metadata.name}-app`);
    for (const app of ['payments-orchestrator', 'payments-gateway-adapter'])
      expect(find('operators', 'ConfigMap', app).data).toMatchObject({ KAFKA_BROKERS: bootstrap });
    const refs = ['payments-orchestrator', 'payments-gateway-adapter'].flatMap((app) =>
      secretRefs(find('operators', 'Deployment', app)),
    );
    expect(refs.sort()).toEqual(clusters.sort());
  });
});
