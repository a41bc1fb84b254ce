/**
 * The layer rules of .dependency-cruiser.cjs (ARCHITECTURE.md) fire on a deliberate violation:
 * a throw-away app whose domain imports its persistence, whose persistence imports a use case,
 * and whose controller imports a repository. The same app without those imports passes.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const ROOT = join(__dirname, '..');
const DEPCRUISE = join(ROOT, 'node_modules', '.bin', 'depcruise');

function cruise(files: Record<string, string>): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'layers-'));
  try {
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { module: 'commonjs', strict: true } }),
    );
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
    let output: string;
    try {
      output = execFileSync(
        DEPCRUISE,
        ['apps', '--config', join(ROOT, '.dependency-cruiser.cjs'), '--output-type', 'json'],
        { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
      );
    } catch (error) {
      // depcruise exits non-zero when it finds violations; the JSON is still on stdout.
      output = (error as { stdout: string }).stdout;
    }
    const result = JSON.parse(output) as {
      summary: { violations: Array<{ rule: { name: string }; from: string; to: string }> };
    };
    return result.summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`).sort();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const clean = {
  'apps/demo/src/flows/thing/domain/decide.ts': `export const decide = (n: number): number => n + 1;\n`,
  'apps/demo/src/persistence/thing.repository.ts': `export class ThingRepository { load(): number { return 1; } }\n`,
  'apps/demo/src/runtime/use-case.ts': `import { decide } from '../flows/thing/domain/decide';\nimport { ThingRepository } from '../persistence/thing.repository';\nexport const run = (): number => decide(new ThingRepository().load());\n`,
  'apps/demo/src/transport/http/controller.ts': `import { run } from '../../runtime/use-case';\nexport const handle = (): number => run();\n`,
};

describe('dependency-cruiser layer rules (ARCHITECTURE.md)', () => {
  it('pass an app that keeps its layers', () => {
    expect(cruise(clean)).toEqual([]);
  });

  it('fail on a domain importing persistence, persistence importing a use case, a transport importing persistence', () => {
    const violations = cruise({
      ...clean,
      'apps/demo/src/flows/thing/domain/decide.ts': `import { ThingRepository } from '../../../persistence/thing.repository';\nexport const decide = (n: number): number => n + new ThingRepository().load();\n`,
      'apps/demo/src/persistence/thing.repository.ts': `import { run } from '../runtime/use-case';\nexport class ThingRepository { load(): number { return typeof run === 'function' ? 1 : 0; } }\n`,
      'apps/demo/src/transport/http/controller.ts': `import { ThingRepository } from '../../persistence/thing.repository';\nexport const handle = (): number => new ThingRepository().load();\n`,
    });
    expect(violations).toEqual(
      expect.arrayContaining([
        'app-domain-imports-only-domain: apps/demo/src/flows/thing/domain/decide.ts → apps/demo/src/persistence/thing.repository.ts',
        'app-persistence-does-not-import-application: apps/demo/src/persistence/thing.repository.ts → apps/demo/src/runtime/use-case.ts',
        'app-transport-does-not-import-persistence: apps/demo/src/transport/http/controller.ts → apps/demo/src/persistence/thing.repository.ts',
      ]),
    );
  });

  it('fail on a use case importing a transport and a flow importing an operator tool', () => {
    const violations = cruise({
      ...clean,
      'apps/demo/src/application/admin/approve.ts': `export const approve = (): number => 1;\n`,
      'apps/demo/src/flows/thing/thing.flow.ts': `import { approve } from '../../application/admin/approve';\nexport const flow = (): number => approve();\n`,
      'apps/demo/src/application/reconciliation/run.ts': `import { handle } from '../../transport/http/controller';\nexport const reconcile = (): number => handle();\n`,
    });
    expect(violations).toEqual(
      expect.arrayContaining([
        'flows-do-not-import-operator-tools: apps/demo/src/flows/thing/thing.flow.ts → apps/demo/src/application/admin/approve.ts',
        'application-does-not-import-transport: apps/demo/src/application/reconciliation/run.ts → apps/demo/src/transport/http/controller.ts',
      ]),
    );
  });
});
