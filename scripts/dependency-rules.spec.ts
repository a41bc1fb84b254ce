/**
 * The layer rules of .dependency-cruiser.cjs (ARCHITECTURE.md) fire on a deliberate violation:
 * a throw-away app whose domain imports its persistence, whose persistence imports a use case,
 * and whose controller imports a repository; one that grows a folder no rule names. The same app
 * without those passes. And the folders the rules name are the folders the apps really have.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
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

interface Restriction {
  readonly path?: string | readonly string[];
  readonly pathNot?: string | readonly string[];
}
interface Rule {
  readonly name: string;
  readonly from?: Restriction;
  readonly to?: Restriction;
}

// The configuration as depcruise reads it (a CommonJS module).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const RULES = (require(join(ROOT, '.dependency-cruiser.cjs')) as { forbidden: Rule[] }).forbidden;

/** The folders directly under each app's src/, as `app/folder`. */
function appFolders(): string[] {
  return readdirSync(join(ROOT, 'apps'), { withFileTypes: true })
    .filter((app) => app.isDirectory())
    .flatMap((app) =>
      readdirSync(join(ROOT, 'apps', app.name, 'src'), { withFileTypes: true })
        .filter((entry) => entry.isDirectory())
        .map((entry) => `${app.name}/${entry.name}`),
    )
    .sort();
}

/** The folder names a path pattern gives after `src/`: `src/(domain|flows/[^/]+/domain)/` → domain, flows. */
function foldersNamed(pattern: string): string[] {
  const named: string[] = [];
  for (const [, group, single] of pattern.matchAll(/src\/(?:\(([^()]*)\)|([a-z-]+))\//g)) {
    for (const alternative of (group ?? single ?? '').split('|')) {
      const first = alternative.split('/')[0] ?? '';
      if (/^[a-z-]+$/.test(first)) named.push(first);
    }
  }
  return named;
}

/** The patterns of a rule's end about apps' files. */
const patternsOf = (restriction: Restriction | undefined): string[] =>
  [restriction?.path, restriction?.pathNot]
    .flat()
    .filter((p): p is string => p !== undefined && p.startsWith('^apps/'));

describe('the folders of every app (ARCHITECTURE.md)', () => {
  const houseRule = RULES.find((r) => r.name === 'app-folder-unknown');
  const house = foldersNamed(patternsOf(houseRule?.from).join(' '));

  it('every folder of an app is a house word, and every house word is a folder of some app', () => {
    expect(house.length).toBeGreaterThan(0);
    const real = appFolders();
    expect(real.filter((f) => !house.includes(f.split('/')[1] ?? ''))).toEqual([]);
    expect(house.filter((word) => !real.some((f) => f.endsWith(`/${word}`)))).toEqual([]);
  });

  it('the layer rules name only house words', () => {
    const named = RULES.flatMap((r) => [...patternsOf(r.from), ...patternsOf(r.to)]).flatMap(
      foldersNamed,
    );
    expect(named.length).toBeGreaterThan(house.length);
    expect([...new Set(named)].filter((word) => !house.includes(word))).toEqual([]);
  });

  it('fail on a module in a folder no rule names: one that imports, one imported, one alone', () => {
    const violations = cruise({
      ...clean,
      'apps/demo/src/helpers/load.ts': `import { ThingRepository } from '../persistence/thing.repository';\nexport const load = (): number => new ThingRepository().load();\n`,
      'apps/demo/src/utils/one.ts': `export const one = 1;\n`,
      'apps/demo/src/runtime/use-case.ts': `import { decide } from '../flows/thing/domain/decide';\nimport { one } from '../utils/one';\nexport const run = (): number => decide(one);\n`,
      'apps/demo/src/misc/alone.ts': `export const alone = true;\n`,
    });
    expect(violations).toEqual(
      expect.arrayContaining([
        'app-folder-unknown: apps/demo/src/helpers/load.ts → apps/demo/src/persistence/thing.repository.ts',
        'app-folder-unknown-used: apps/demo/src/runtime/use-case.ts → apps/demo/src/utils/one.ts',
        'app-folder-unknown-alone: apps/demo/src/misc/alone.ts → apps/demo/src/misc/alone.ts',
      ]),
    );
    expect(violations.filter((v) => v.startsWith('app-folder-'))).toHaveLength(3);
  });
});
