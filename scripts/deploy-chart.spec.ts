/**
 * The deployment files (deploy/helm/payments, deploy/compose, deploy/docker) against the apps'
 * own configuration shapes (apps/<app>/src/config.ts). Helm cannot render here and Docker cannot
 * build, so this checks what can be read: the YAML parses, every variable an app needs is given
 * to it by the chart's values and by compose, every variable given is one the app reads and has
 * a value it accepts, and no secret value sits in values.yaml.
 *
 * "Needs" is derived from the shapes, so adding a variable to an app without adding it to the
 * deployment files fails here:
 *  - its schema rejects `undefined` (no default): required;
 *  - its default points at the loopback (127.0.0.1, localhost): right for a laptop, wrong in a
 *    container, so a deployment must set it (DATABASE_URL, KAFKA_BROKERS, CALLBACK_BASE_URL);
 *  - a secret X declared with an X_FILE twin: the app demands one of the two at boot (credentials,
 *    card key, control keys); deployments give the _FILE variant, never the value.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse } from 'yaml';
import { z } from 'zod';
import { ConfigShape, envVar, EnvVar, listVariables } from '@payments/config';
import { parseDatabaseUrl } from '@payments/database';
import { KAFKA_DEFAULTS } from '@payments/kafka';
import { orchestratorConfigShape } from '../apps/orchestrator/src/config';
import { gatewayAdapterConfigShape } from '../apps/gateway-adapter/src/config';
import { callbackIngestConfigShape } from '../apps/callback-ingest/src/config';
import { sandboxConfigShape } from '../apps/gateway-sandbox/src/config';
import { consoleConfigShape } from '../apps/console/src/config';

const ROOT = resolve(__dirname, '..');
const CHART = join(ROOT, 'deploy/helm/payments');
const COMPOSE_DIR = join(ROOT, 'deploy/compose');
const read = (path: string): string => readFileSync(path, 'utf8');

type Tree = Record<string, unknown>;
const isTree = (v: unknown): v is Tree => typeof v === 'object' && v !== null && !Array.isArray(v);
const tree = (v: unknown, what: string): Tree => {
  if (!isTree(v)) throw new Error(`${what} is not a mapping`);
  return v;
};
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

interface App {
  readonly dir: string;
  readonly valuesKey: string;
  readonly shape: ConfigShape;
  readonly common: boolean;
  readonly consumer: boolean;
}

const APPS: readonly App[] = [
  {
    dir: 'orchestrator',
    valuesKey: 'orchestrator',
    shape: orchestratorConfigShape,
    common: true,
    consumer: true,
  },
  {
    dir: 'gateway-adapter',
    valuesKey: 'gatewayAdapter',
    shape: gatewayAdapterConfigShape,
    common: true,
    consumer: true,
  },
  {
    dir: 'callback-ingest',
    valuesKey: 'callbackIngest',
    shape: callbackIngestConfigShape,
    common: true,
    consumer: false,
  },
  {
    dir: 'gateway-sandbox',
    valuesKey: 'sandbox',
    shape: sandboxConfigShape,
    common: false,
    consumer: false,
  },
  {
    dir: 'console',
    valuesKey: 'console',
    shape: consoleConfigShape,
    common: false,
    consumer: false,
  },
];

/** A requirement is met when any of the names is provided. */
interface Requirement {
  readonly anyOf: readonly string[];
  readonly why: string;
}

const LOOPBACK = /127\.0\.0\.1|localhost|\[::1\]/;

function requirements(shape: ConfigShape): Requirement[] {
  const vars = listVariables(shape);
  const names = new Set(vars.map((v) => v.name));
  const out: Requirement[] = [];
  for (const v of vars) {
    const file = `${v.name}_FILE`;
    const anyOf = names.has(file) ? [v.name, file] : [v.name];
    const missing = v.schema.safeParse(undefined);
    if (!missing.success) {
      out.push({ anyOf, why: 'no default' });
    } else if (LOOPBACK.test(JSON.stringify(missing.data) ?? '')) {
      out.push({ anyOf, why: 'its default is a loopback address' });
    } else if (v.secret && names.has(file)) {
      out.push({ anyOf, why: 'a secret the app needs from the value or the file' });
    }
  }
  return out;
}

/** The requirements of `shape` that `provided` does not meet, as "NAME (why)". */
function unmet(shape: ConfigShape, provided: ReadonlySet<string>): string[] {
  return requirements(shape)
    .filter((r) => !r.anyOf.some((name) => provided.has(name)))
    .map((r) => `${r.anyOf.join(' or ')} (${r.why})`);
}

function variablesOf(shape: ConfigShape): Map<string, EnvVar<unknown>> {
  return new Map(listVariables(shape).map((v) => [v.name, v]));
}

// ---- the chart --------------------------------------------------------------------------------

const values = tree(parse(read(join(CHART, 'values.yaml'))), 'values.yaml');
const valuesText = read(join(CHART, 'values.yaml'));
const helpers = read(join(CHART, 'templates/_helpers.tpl'));

/** Variables the chart sets itself in "payments.env" (checked against _helpers.tpl below). */
const CHART_FIXED = ['HTTP_PORT', 'APP_VERSION'];

interface ChartEnv {
  /** Plain values that land in the app's ConfigMap. */
  readonly plain: Map<string, string>;
  /** Names given from a Secret key (secretEnv) or as the path of a mounted Secret file. */
  readonly fromSecrets: Set<string>;
  readonly all: Set<string>;
}

/** Helm's merge of a value set over the chart's values: mappings merged, anything else replaced. */
function overlay(base: Tree, over: Tree): Tree {
  const out: Tree = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    out[k] = isTree(b) && isTree(v) ? overlay(b, v) : v;
  }
  return out;
}

/** The value sets scripts/helm-check.sh renders (deploy/helm/check/values), by name. */
const VALUE_SETS_DIR = join(ROOT, 'deploy/helm/check/values');
const valueSets = readdirSync(VALUE_SETS_DIR)
  .filter((f) => f.endsWith('.yaml'))
  .map((f) => {
    const text = read(join(VALUE_SETS_DIR, f));
    return { name: f.replace(/\.yaml$/, ''), text, values: tree(parse(text) ?? {}, f) };
  });

function chartEnv(app: App, chartValues: Tree = values): ChartEnv {
  const values = chartValues;
  const own = tree(values[app.valuesKey], app.valuesKey);
  const plain = new Map<string, string>();
  const add = (env: unknown) => {
    for (const [k, v] of Object.entries(isTree(env) ? env : {})) plain.set(k, String(v));
  };
  if (app.common) add(values.commonEnv);
  add(own.env);
  const fromSecrets = new Set<string>(Object.keys(isTree(own.secretEnv) ? own.secretEnv : {}));
  for (const file of list(own.secretFiles)) {
    fromSecrets.add(String(tree(file, `${app.valuesKey}.secretFiles[]`).envVar));
  }
  return { plain, fromSecrets, all: new Set([...plain.keys(), ...fromSecrets, ...CHART_FIXED]) };
}

// ---- compose ----------------------------------------------------------------------------------

const compose = tree(parse(read(join(COMPOSE_DIR, 'compose.yaml')), { merge: true }), 'compose');
const services = tree(compose.services, 'compose services');

function composeEnv(app: App): Map<string, string> {
  const service = tree(services[app.dir], `compose service ${app.dir}`);
  const env = tree(service.environment, `${app.dir}.environment`);
  return new Map(Object.entries(env).map(([k, v]) => [k, String(v)]));
}

/** Compose-only variables that the image reads, not the app. */
const IMAGE_VARIABLES = new Set(['APP']);

// ---- tests ------------------------------------------------------------------------------------

describe('requirement detection', () => {
  it('finds the variables deployments must set', () => {
    const names = (shape: ConfigShape) => requirements(shape).map((r) => r.anyOf.join('|'));
    expect(names(orchestratorConfigShape)).toEqual(['KAFKA_BROKERS', 'DATABASE_URL']);
    expect(names(gatewayAdapterConfigShape)).toEqual(
      expect.arrayContaining([
        'KAFKA_BROKERS',
        'DATABASE_URL',
        'GATEWAY_CREDENTIALS|GATEWAY_CREDENTIALS_FILE',
        'CARD_SEALING_PRIVATE_KEY|CARD_SEALING_PRIVATE_KEY_FILE',
        'CALLBACK_BASE_URL',
      ]),
    );
    expect(names(callbackIngestConfigShape)).toEqual(
      expect.arrayContaining([
        'CALLBACK_CONTROL_KEYS|CALLBACK_CONTROL_KEYS_FILE',
        'MERCHANT_RETURN_URL',
        'KAFKA_BROKERS',
      ]),
    );
  });

  it('reports a newly added required variable that no deployment file provides', () => {
    const grown = {
      ...callbackIngestConfigShape,
      added: envVar('SOME_NEW_REQUIRED_SETTING', z.string().min(1)),
    };
    const provided = chartEnv(APPS[2]).all;
    expect(unmet(callbackIngestConfigShape, provided)).toEqual([]);
    expect(unmet(grown, provided)).toEqual(['SOME_NEW_REQUIRED_SETTING (no default)']);
  });
});

describe.each(APPS)('$dir', (app) => {
  const known = variablesOf(app.shape);

  describe('Helm values', () => {
    const env = chartEnv(app);

    it('provide every variable the app needs', () => {
      expect(unmet(app.shape, env.all)).toEqual([]);
    });

    it('provide only variables the app reads, with values it accepts', () => {
      expect([...env.all].filter((name) => !known.has(name))).toEqual([]);
      const rejected = [...env.plain]
        .filter(([name, value]) => !known.get(name)?.schema.safeParse(value).success)
        .map(([name]) => name);
      expect(rejected).toEqual([]);
    });

    it('never put a secret variable in plain env; secrets come from Secrets', () => {
      const secrets = [...known.values()].filter((v) => v.secret).map((v) => v.name);
      expect(secrets.filter((name) => env.plain.has(name) || env.fromSecrets.has(name))).toEqual(
        [],
      );
    });

    it('give consumers a grace period longer than the consumer shutdown', () => {
      const own = tree(values[app.valuesKey], app.valuesKey);
      const grace = Number(own.terminationGracePeriodSeconds);
      const bound = app.consumer ? (2 * KAFKA_DEFAULTS.shutdownTimeoutMs) / 1000 : 10;
      expect(grace).toBeGreaterThan(bound);
      expect(tree(own.pdb, 'pdb')).toHaveProperty('enabled');
    });
  });

  it.each(valueSets.map((set) => set.name))(
    'the value set %s gives only variables the app reads, with values it accepts, and still every one it needs',
    (name) => {
      const set = valueSets.find((v) => v.name === name);
      const env = chartEnv(app, overlay(values, set?.values ?? {}));
      expect(unmet(app.shape, env.all)).toEqual([]);
      expect([...env.all].filter((n) => !known.has(n))).toEqual([]);
      const rejected = [...env.plain]
        .filter(([n, value]) => !known.get(n)?.schema.safeParse(value).success)
        .map(([n, value]) => `${n}=${value}`);
      expect(rejected).toEqual([]);
    },
  );

  describe('compose', () => {
    const env = composeEnv(app);
    const service = tree(services[app.dir], app.dir);

    it('provides every variable the app needs', () => {
      expect(unmet(app.shape, new Set(env.keys()))).toEqual([]);
    });

    it('provides only variables the app reads, with values it accepts', () => {
      const names = [...env.keys()].filter((name) => !IMAGE_VARIABLES.has(name));
      expect(names.filter((name) => !known.has(name))).toEqual([]);
      expect(
        names.filter((name) => !known.get(name)?.schema.safeParse(env.get(name)).success),
      ).toEqual([]);
      expect(env.get('APP')).toBe(app.dir);
    });

    it('gives secrets as files mounted from compose secrets', () => {
      const secretNames = [...known.values()].filter((v) => v.secret).map((v) => v.name);
      expect(secretNames.filter((name) => env.has(name))).toEqual([]);
      const mounted = list(service.secrets).map(
        (s) => `/run/secrets/${String(tree(s, 'secret').target)}`,
      );
      for (const [name, value] of env) {
        if (name.endsWith('_FILE') && known.get(name.slice(0, -5))?.secret) {
          expect(mounted).toContain(value);
        }
      }
    });

    it('waits for healthy dependencies, has a health check and a long enough stop grace', () => {
      expect(service.healthcheck).toBeDefined();
      for (const dependency of Object.values(tree(service.depends_on ?? {}, 'depends_on'))) {
        expect(tree(dependency, 'dependency').condition).toBe('service_healthy');
      }
      const grace = /^(\d+)s$/.exec(String(service.stop_grace_period));
      expect(Number(grace?.[1])).toBeGreaterThan((2 * KAFKA_DEFAULTS.shutdownTimeoutMs) / 1000);
    });
  });
});

describe('chart structure', () => {
  it('sets HTTP_PORT and APP_VERSION itself, probes /health/live and /health/ready', () => {
    for (const name of CHART_FIXED) expect(helpers).toContain(`set $env "${name}"`);
    expect(helpers).toMatch(/livenessProbe:\s+httpGet:\s+path: \/health\/live/);
    expect(helpers).toMatch(/readinessProbe:\s+httpGet:\s+path: \/health\/ready/);
    expect(helpers).toContain('prometheus.io/scrape: "true"');
    expect(helpers).toContain(
      'terminationGracePeriodSeconds: {{ $app.terminationGracePeriodSeconds }}',
    );
    expect(helpers).toContain('command: ["node", "dist/apps/{{ .component }}/src/main.js"]');
  });

  it.each(APPS)('renders $dir from its own values', (app) => {
    const template = read(join(CHART, `templates/${app.dir}.yaml`));
    expect(template).toContain(
      `"component" "${app.dir}" "app" .Values.${app.valuesKey} "common" ${String(app.common)}`,
    );
    expect(existsSync(join(ROOT, 'apps', app.dir, 'src/main.ts'))).toBe(true);
  });

  it('runs pods as non-root with a read-only root filesystem', () => {
    expect(tree(values.podSecurityContext, 'pod')).toMatchObject({ runAsNonRoot: true });
    expect(tree(values.containerSecurityContext, 'container')).toMatchObject({
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      runAsNonRoot: true,
    });
  });

  it('keeps the sandbox off by default and behind its flag', () => {
    expect(tree(values.sandbox, 'sandbox').enabled).toBe(false);
    expect(read(join(CHART, 'templates/gateway-sandbox.yaml'))).toContain(
      '{{- if .Values.sandbox.enabled }}',
    );
  });

  it('keeps the console off by default; on, it reads its session secret from a Secret the chart makes once', () => {
    const own = tree(values.console, 'console');
    expect(own.enabled).toBe(false);
    expect(read(join(CHART, 'templates/console.yaml'))).toContain(
      '{{- if .Values.console.enabled }}',
    );
    const sessionFile = list(own.secretFiles)
      .map((f) => tree(f, 'console.secretFiles[]'))
      .find((f) => f.envVar === 'CONSOLE_SESSION_SECRET_FILE');
    expect(sessionFile).toBeDefined();
    const secret = read(join(CHART, 'templates/console-secret.yaml'));
    expect(secret).toContain('kind: Secret');
    expect(secret).toContain('helm.sh/hook: pre-install');
    expect(secret).toContain('helm.sh/resource-policy: keep');
    expect(tree(own.env, 'console.env').CONSOLE_ADMIN_API_URL).toMatch(
      /^http:\/\/.+-orchestrator:3001$/,
    );
  });

  it('exposes only callback-ingest through an Ingress; internal apps stay ClusterIP', () => {
    const withIngress = APPS.filter((a) => 'ingress' in tree(values[a.valuesKey], a.valuesKey));
    expect(withIngress.map((a) => a.dir)).toEqual(['callback-ingest']);
    const ingress = read(join(CHART, 'templates/ingress.yaml'));
    expect(ingress.match(/\.Values\.\w+/g)?.every((v) => v === '.Values.callbackIngest')).toBe(
      true,
    );
    for (const key of ['orchestrator', 'gatewayAdapter']) {
      const service = tree(values[key], key).service;
      expect(isTree(service) ? service.type : 'ClusterIP').toBe('ClusterIP');
    }
  });

  it('mounts the signing secrets and the card key into the gateway-adapter only', () => {
    const adapterSecrets = listVariables(gatewayAdapterConfigShape)
      .filter((v) => v.secret)
      .flatMap((v) => [v.name, `${v.name}_FILE`]);
    for (const app of APPS) {
      const given = [...chartEnv(app).all, ...composeEnv(app).keys()];
      const held = adapterSecrets.filter((name) => given.includes(name));
      if (app.dir === 'gateway-adapter') expect(held.length).toBeGreaterThan(0);
      else expect(held).toEqual([]);
    }
  });

  it('documents an external replicated PostgreSQL and a Kafka cluster, and external-ha renders one', () => {
    // The multi-host URL values.yaml shows is one the apps accept and resolve to several hosts.
    const documented = /postgres:\/\/\S+target_session_attrs=read-write/.exec(valuesText)?.[0];
    expect(documented).toBeDefined();
    const parsed = parseDatabaseUrl(documented ?? '');
    expect(parsed.hosts.length).toBeGreaterThan(1);
    expect(parsed.targetSessionAttrs).toBe('read-write');
    const urlVar = variablesOf(orchestratorConfigShape).get('DATABASE_URL');
    expect(urlVar?.schema.safeParse(documented).success).toBe(true);
    // Every setting it names is one the apps read.
    const names = new Set([...APPS.slice(0, 3)].flatMap((a) => [...variablesOf(a.shape).keys()]));
    for (const name of [
      'KAFKA_REPLICATION_FACTOR',
      'KAFKA_MIN_INSYNC_REPLICAS',
      'KAFKA_SESSION_TIMEOUT_MS',
      'DATABASE_POOL_SIZE',
    ]) {
      expect(valuesText).toContain(name);
      expect(names.has(name)).toBe(true);
    }
    // The example set: the URLs (in its comments: they carry passwords, so Secrets) parse as
    // multi-host read-write URLs; the Kafka cluster is three brokers with replication 3, min ISR 2.
    const set = valueSets.find((v) => v.name === 'external-ha');
    expect(set).toBeDefined();
    const urls = (set?.text ?? '').match(/postgres:\/\/[^'\s]+/g) ?? [];
    expect(urls).toHaveLength(2);
    for (const url of urls) {
      const u = parseDatabaseUrl(url);
      expect(u.hosts.length).toBe(3);
      expect(u.targetSessionAttrs).toBe('read-write');
    }
    const common = tree(set?.values.commonEnv, 'external-ha commonEnv');
    expect(String(common.KAFKA_BROKERS).split(',')).toHaveLength(3);
    expect(common).toMatchObject({ KAFKA_REPLICATION_FACTOR: '3', KAFKA_MIN_INSYNC_REPLICAS: '2' });
    expect(JSON.stringify(set?.values)).not.toMatch(/postgres:\/\//);
  });

  it('inlines no secret value in values.yaml', () => {
    const merchants = tree(
      JSON.parse(read(join(ROOT, 'apps/gateway-sandbox/sandbox.merchants.json'))),
      'merchants',
    );
    const testControlKey = String(tree(list(merchants.merchants)[0], 'merchant').controlKey);
    expect(valuesText).not.toContain(testControlKey);
    // Comments may name them; no key or value may.
    expect(JSON.stringify(values)).not.toMatch(/PRIVATE KEY|controlKey|password|BEGIN /i);
    for (const app of APPS) {
      const own = tree(values[app.valuesKey], app.valuesKey);
      for (const ref of [
        ...Object.values(isTree(own.secretEnv) ? own.secretEnv : {}),
        ...list(own.secretFiles),
      ]) {
        expect(Object.keys(tree(ref, 'secret reference')).sort()).toEqual(
          expect.arrayContaining(['key', 'secretName']),
        );
        expect(tree(ref, 'secret reference')).not.toHaveProperty('value');
      }
    }
  });
});

describe('compose stack', () => {
  it('runs Kafka 3.9 in KRaft mode and PostgreSQL 15', () => {
    const kafka = tree(services.kafka, 'kafka');
    expect(String(kafka.image)).toMatch(/^apache\/kafka:3\.9\./);
    expect(tree(kafka.environment, 'kafka env').KAFKA_PROCESS_ROLES).toBe('broker,controller');
    expect(String(tree(services.postgres, 'postgres').image)).toMatch(/^postgres:15/);
  });

  it('mounts secret files that exist in the repository', () => {
    for (const [name, secret] of Object.entries(tree(compose.secrets, 'secrets'))) {
      const file = resolve(COMPOSE_DIR, String(tree(secret, name).file));
      expect(existsSync(file)).toBe(true);
    }
  });

  it('points the adapter at the sandbox and callback-ingest at the same endpoints and keys', () => {
    const credentials = tree(
      JSON.parse(read(join(COMPOSE_DIR, 'secrets/gateway-credentials.sandbox.json'))),
      'credentials',
    );
    const controlKeys = tree(
      JSON.parse(read(join(COMPOSE_DIR, 'secrets/callback-control-keys.sandbox.json'))),
      'control keys',
    );
    const endpoints = list(credentials.endpoints).map((e) => tree(e, 'endpoint'));
    for (const e of endpoints) {
      expect(new URL(String(e.baseUrl)).host).toBe('gateway-sandbox:8080');
      const id = String(e.endpointId ?? e.endpointGroupId);
      expect(controlKeys[id]).toBe(e.controlKey);
    }
    expect(Object.keys(controlKeys).length).toBe(endpoints.length);
  });
});

describe('docker image', () => {
  const dockerfile = read(join(ROOT, 'deploy/docker/Dockerfile'));
  const ignore = read(join(ROOT, 'deploy/docker/.dockerignore'));

  it('builds, prunes dev dependencies and runs as a non-root user', () => {
    expect(dockerfile).toMatch(/^FROM node:24-bookworm-slim|ARG NODE_IMAGE=node:24-bookworm-slim/m);
    for (const step of ['npm ci', 'npm run build', 'npm prune --omit=dev', 'USER 1000:1000']) {
      expect(dockerfile).toContain(step);
    }
  });

  it('keeps private keys out and reads the same ignore file under BuildKit', () => {
    expect(ignore).toContain('**/*private*.pem');
    expect(read(join(ROOT, 'deploy/docker/Dockerfile.dockerignore'))).toBe(ignore);
    // The runtime stage copies only files the ignore rules let in.
    for (const match of dockerfile.matchAll(/COPY --from=build \/src\/(apps\/\S+) /g)) {
      expect(existsSync(join(ROOT, match[1]))).toBe(true);
      expect(match[1]).not.toMatch(/private/);
    }
  });
});
