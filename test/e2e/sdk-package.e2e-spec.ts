/**
 * @payments/sdk as another team would use it: built to dist, packed with `npm pack`, installed
 * from the tarball into an empty project (its dependencies come from npm's cache when present),
 * a sample (libs/sdk/examples/sale-and-listen.ts) compiled there with `tsc` against the package's
 * own type declarations, then run against the real broker and the four processes: it sends a
 * sale with the card sealed by the SDK and prints the sale's events until the final one. The
 * sandbox's ledger must show exactly one charge.
 */
import { execFile } from 'node:child_process';
import {
  copyFileSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { PaymentStack, TEST_CARD_NUMBER } from '../../scripts/stack/payment-stack';
import { REPO_ROOT } from '../../scripts/stack/processes';
import { type E2eStack, startE2eStack } from '../support/e2e-stack';

const exec = promisify(execFile);
const SDK = path.join(REPO_ROOT, 'libs/sdk');
const NPM_QUIET = ['--no-audit', '--no-fund', '--loglevel=error'];

let stack: PaymentStack;
let e2e: E2eStack;
let project: string;

beforeAll(async () => {
  e2e = await startE2eStack('sdk');
  stack = e2e.stack;
  project = mkdtempSync(path.join(tmpdir(), 'sdk-consumer-'));
});

afterAll(async () => {
  await e2e?.stop();
  if (project !== undefined) rmSync(project, { recursive: true, force: true });
});

it('packs, installs from the tarball, compiles a sample with tsc and runs it against the stack', async () => {
  // Build and pack exactly what would be published.
  await exec('npm', ['run', '--silent', 'build'], { cwd: SDK });
  const { stdout: packed } = await exec(
    'npm',
    ['pack', '--json', '--pack-destination', project, ...NPM_QUIET],
    { cwd: SDK },
  );
  const [{ filename, files }] = JSON.parse(packed) as [
    { filename: string; files: { path: string }[] },
  ];
  const shipped = files.map((f) => f.path);
  expect(shipped).toEqual(
    expect.arrayContaining([
      'package.json',
      'README.md',
      'dist/sdk/src/index.js',
      'dist/sdk/src/index.d.ts',
    ]),
  );
  expect(shipped.filter((f) => /\.spec\.|\.ts$/.test(f) && !f.endsWith('.d.ts'))).toEqual([]);

  // An empty project that depends on the tarball only.
  writeFileSync(
    path.join(project, 'package.json'),
    JSON.stringify({ name: 'sdk-consumer', version: '1.0.0', private: true }, null, 2),
  );
  await exec('npm', ['install', '--prefer-offline', ...NPM_QUIET, path.join(project, filename)], {
    cwd: project,
  });
  expect(readdirSync(path.join(project, 'node_modules/@payments/sdk/dist'))).toContain('sdk');

  // Compile the sample against the installed package's declarations.
  copyFileSync(
    path.join(SDK, 'examples/sale-and-listen.ts'),
    path.join(project, 'sale-and-listen.ts'),
  );
  writeFileSync(
    path.join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'commonjs',
        moduleResolution: 'node',
        strict: true,
        esModuleInterop: true,
        skipLibCheck: false,
        outDir: 'out',
        types: ['node'],
        typeRoots: [path.join(REPO_ROOT, 'node_modules/@types')],
      },
      files: ['sale-and-listen.ts'],
    }),
  );
  await exec(
    process.execPath,
    [path.join(REPO_ROOT, 'node_modules/typescript/bin/tsc'), '-p', project],
    { cwd: project },
  );

  // Run it: one sale, its card sealed by the SDK, followed to its final event.
  const sale = stack.sale({ amountMinor: 2_500 });
  const { sealedCard: _sealed, type: _type, commandId: _id, occurredAt: _at, ...fields } = sale;
  writeFileSync(
    path.join(project, 'input.json'),
    JSON.stringify({
      brokers: stack.options.kafkaBrokers,
      cardSealingPublicKeyPem: readFileSync(
        path.join(REPO_ROOT, 'apps/gateway-adapter/test-keys/card-sealing-test-public.pem'),
        'utf8',
      ),
      groupId: `sdk-sample-${sale.paymentId}`,
      sale: fields,
      card: {
        number: TEST_CARD_NUMBER,
        expiryMonth: 12,
        expiryYear: 2030,
        cvv: '123',
        holderName: 'JANE DOE',
      },
    }),
  );
  const { stdout } = await exec(
    process.execPath,
    [path.join(project, 'out/sale-and-listen.js'), path.join(project, 'input.json')],
    {
      cwd: project,
      timeout: 120_000,
    },
  );
  const lines = stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => !('logger' in l)); // kafkajs's own warnings, if any
  expect(lines).toContainEqual({ sent: 'sale', commandId: expect.any(String) });
  expect(lines.filter((l) => 'seen' in l).map((l) => l.seen)).toEqual([
    'operation-requested',
    'accepted-by-gateway',
    'approved',
  ]);
  expect(lines).toContainEqual(
    expect.objectContaining({
      approved: sale.paymentId,
      amount: { minor: 2_500, currency: 'USD' },
    }),
  );
  expect(lines.at(-1)).toEqual({ final: 'approved' });
  expect(stdout).not.toContain(TEST_CARD_NUMBER);

  // The service saw it as any other command: one charge.
  const ledger = await stack.controls.ledger(sale.paymentId);
  expect(ledger.entries.filter((e) => e.movement === 'charged')).toHaveLength(1);
}, 300_000);
