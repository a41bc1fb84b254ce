/**
 * Three tiers (STYLE.md §9):
 *  - unit:        *.spec.ts beside the code, pure logic, no I/O.
 *  - database:    *.db-spec.ts, against the real PostgreSQL alone (the saga runtime).
 *  - integration: *.int-spec.ts, against the real broker and the real PostgreSQL.
 *  - e2e:         test/e2e/*.e2e-spec.ts, the apps and the sandbox as separate processes.
 *  - failover:    *.failover-spec.ts, against a replicated PostgreSQL whose primary they kill
 *                 (inside scripts/with-pg-ha.sh: `npm run test:failover` alone; in `npm test`
 *                 scripts/test-integration.sh runs it beside the integration tier, on a broker
 *                 of its own).
 * `npm test` runs unit first, then integration and e2e inside scripts/with-infra.sh, which starts
 * (or reuses, via KAFKA_BROKERS) the brokers: with several workers, one broker per worker (their
 * test environment picks it), the longest suites first (jest.sequencer.cjs).
 */
const { readFileSync } = require('node:fs');
const tsconfig = JSON.parse(readFileSync(`${__dirname}/tsconfig.json`, 'utf8'));

const moduleNameMapper = {};
for (const [alias, [target]] of Object.entries(tsconfig.compilerOptions.paths)) {
  const from = `^${alias.replace('/*', '/(.*)')}$`;
  moduleNameMapper[from] = `<rootDir>/${target.replace('/*', '/$1')}`;
}

const transform = {
  '^.+\\.ts$': [
    '@swc/jest',
    {
      jsc: {
        parser: { syntax: 'typescript', decorators: true },
        transform: { legacyDecorator: true, decoratorMetadata: true },
        target: 'es2022',
      },
      module: { type: 'commonjs' },
      sourceMaps: 'inline',
    },
  ],
};

const common = {
  rootDir: __dirname,
  transform,
  moduleNameMapper,
  testEnvironment: 'node',
  moduleFileExtensions: ['ts', 'js', 'json'],
  modulePathIgnorePatterns: ['<rootDir>/dist/'],
};

// Integration and e2e: each jest worker on its own broker (test/setup/worker-broker-environment.ts).
const brokerTiers = { testEnvironment: '<rootDir>/test/setup/worker-broker-environment.ts' };

module.exports = {
  testSequencer: '<rootDir>/jest.sequencer.cjs',
  projects: [
    {
      ...common,
      displayName: 'unit',
      testMatch: ['<rootDir>/{apps,libs,scripts,bench}/**/*.spec.ts'],
    },
    {
      ...common,
      displayName: 'database',
      testMatch: ['<rootDir>/{apps,libs}/**/*.db-spec.ts'],
      setupFilesAfterEnv: ['<rootDir>/test/setup/integration-timeout.ts'],
    },
    {
      ...common,
      ...brokerTiers,
      displayName: 'integration',
      testMatch: ['<rootDir>/{apps,libs,test}/**/*.int-spec.ts'],
      setupFilesAfterEnv: ['<rootDir>/test/setup/integration-timeout.ts'],
    },
    {
      ...common,
      ...brokerTiers,
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/e2e/**/*.e2e-spec.ts'],
      setupFilesAfterEnv: ['<rootDir>/test/setup/e2e-timeout.ts'],
    },
    {
      ...common,
      displayName: 'failover',
      testMatch: ['<rootDir>/test/failover/**/*.failover-spec.ts'],
      setupFilesAfterEnv: ['<rootDir>/test/setup/integration-timeout.ts'],
    },
  ],
};
