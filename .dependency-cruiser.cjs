/**
 * Layering rules (STYLE.md "Domain-Driven Hexagon"):
 *  - libraries never import apps; an app never imports another app;
 *  - domain folders import no Nest, TypeORM, kafkajs, pg or undici code;
 *  - the gateway client is framework-free outside its thin `nest/` adapter;
 *  - the gateway sandbox, the client's oracle, never imports the client;
 *  - libs/core is framework-free and imports no other library: everything may depend on it;
 *  - no cycles;
 *  - inside every app (ARCHITECTURE.md): domain code imports nothing of its app outside domain
 *    folders; persistence does not import the application layer; transports do not import
 *    persistence; the application layer does not import transports; flows do not import the
 *    operator tools built on them (admin, reconciliation, queries).
 */
/** Test files may reach across layers to set up what they test. */
const TESTS = '[.](spec|int-spec|db-spec|e2e-spec)[.]ts$';

/**
 * The folders an app's `src/` may have (ARCHITECTURE.md's layers; `secrets/` is composition, like
 * `config.ts`): a folder outside them is a layer no rule knows, and the three `app-folder-*` rules
 * fail on any module in it (one with dependencies, one with dependents, one alone). `scripts/dependency-rules.spec.ts`
 * holds this list to the folders the apps really have.
 */
const APP_FOLDERS = [
  'application',
  'commands',
  'domain',
  'flows',
  'migrations',
  'persistence',
  'runtime',
  'secrets',
  'transport',
];
/** A module in a folder of an app's `src/` that is not one of {@link APP_FOLDERS}. */
const OUTSIDE_APP_FOLDERS = {
  path: '^apps/[^/]+/src/[^/]+/',
  pathNot: `^apps/[^/]+/src/(${APP_FOLDERS.join('|')})/`,
};
const UNKNOWN_FOLDER =
  'A folder of an app is one of the house layers (ARCHITECTURE.md), or a rule names it.';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A cycle means a boundary is wrong; do not patch it with forwardRef.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'libs-never-import-apps',
      severity: 'error',
      from: { path: '^libs/' },
      to: { path: '^apps/' },
    },
    {
      name: 'apps-do-not-import-each-other',
      severity: 'error',
      from: { path: '^apps/([^/]+)/' },
      to: { path: '^apps/([^/]+)/', pathNot: '^apps/$1/' },
    },
    {
      name: 'domain-is-framework-free',
      severity: 'error',
      comment: 'Domain code is pure: no Nest, ORM, broker, database or HTTP client imports.',
      from: { path: '/domain/' },
      to: {
        path: 'node_modules/(@nestjs|typeorm|kafkajs|pg|undici|nestjs-pino|prom-client)(/|$)',
      },
    },
    {
      name: 'app-domain-imports-only-domain',
      severity: 'error',
      comment:
        'A domain folder imports nothing of its app but other domain folders (ARCHITECTURE.md).',
      from: { path: '^apps/([^/]+)/src/(domain|flows/[^/]+/domain)/', pathNot: TESTS },
      to: { path: '^apps/$1/src/', pathNot: '^apps/$1/src/(domain|flows/[^/]+/domain)/' },
    },
    {
      name: 'app-persistence-does-not-import-application',
      severity: 'error',
      comment:
        'Persistence knows tables and the runtime contract types (runtime/flow.ts), not use cases or transports.',
      from: { path: '^apps/([^/]+)/src/persistence/', pathNot: TESTS },
      to: {
        path: '^apps/$1/src/(application|flows|runtime|transport)/',
        pathNot: '^apps/$1/src/runtime/flow[.]ts$',
      },
    },
    {
      name: 'app-transport-does-not-import-persistence',
      severity: 'error',
      comment:
        'Controllers and Kafka handlers hand over to the application layer; no table access.',
      from: { path: '^apps/([^/]+)/src/transport/', pathNot: TESTS },
      to: { path: '^apps/$1/src/(persistence|migrations)/' },
    },
    {
      name: 'application-does-not-import-transport',
      severity: 'error',
      comment:
        'Controllers and Kafka handlers call the application layer (use cases, flows, the runtime, admin, reconciliation, queries, the outbox relay), never the other way round.',
      from: {
        path: '^apps/([^/]+)/src/(application|flows|runtime|commands)/',
        pathNot: TESTS,
      },
      to: { path: '^apps/$1/src/transport/' },
    },
    {
      name: 'flows-do-not-import-operator-tools',
      severity: 'error',
      comment:
        'A flow is its decider and its binding to the runtime: admin actions, reconciliation and read queries build on flows, not the other way round.',
      from: { path: '^apps/([^/]+)/src/flows/', pathNot: TESTS },
      to: { path: '^apps/$1/src/application/' },
    },
    {
      name: 'app-folder-unknown',
      severity: 'error',
      comment: UNKNOWN_FOLDER,
      from: OUTSIDE_APP_FOLDERS,
      to: {},
    },
    {
      name: 'app-folder-unknown-used',
      severity: 'error',
      comment: UNKNOWN_FOLDER,
      from: {},
      to: OUTSIDE_APP_FOLDERS,
    },
    {
      name: 'app-folder-unknown-alone',
      severity: 'error',
      comment: UNKNOWN_FOLDER,
      from: { ...OUTSIDE_APP_FOLDERS, orphan: true },
      to: {},
    },
    {
      name: 'payment-gateway-is-framework-free',
      severity: 'error',
      from: { path: '^libs/payment-gateway/src/', pathNot: '^libs/payment-gateway/src/nest/' },
      to: { path: 'node_modules/(@nestjs|typeorm|kafkajs)(/|$)' },
    },
    {
      name: 'sandbox-is-independent-of-the-gateway-client',
      severity: 'error',
      comment:
        "The sandbox is the gateway client's oracle: its source never imports libs/payment-gateway (its tests do, to hold the client against it).",
      from: { path: '^apps/gateway-sandbox/src/', pathNot: TESTS },
      to: { path: '^libs/payment-gateway/' },
    },
    {
      name: 'core-is-framework-free',
      severity: 'error',
      comment:
        'libs/core (clock, ids, timeouts, loop, card-number masking) is imported by every layer: no framework, driver or client, no other library, no app.',
      from: { path: '^libs/core/' },
      to: {
        path: [
          'node_modules/(@nestjs|typeorm|kafkajs|pg|undici|nestjs-pino|pino|prom-client|zod)(/|$)',
          '^libs/(?!core/)',
        ],
      },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^dist/|^node_modules/|^libs/sdk/dist/)' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['main', 'types', 'typings'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
