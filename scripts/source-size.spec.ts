/**
 * No source file over 600 lines (issue #37): a file that long holds more than one thing, and its
 * parts belong in files of their own names. Every .ts file under apps/, libs/ and scripts/ counts
 * but the tests (`*spec.ts`: unit, database, integration, e2e and failover specs).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.join(__dirname, '..');
const FOLDERS = ['apps', 'libs', 'scripts'];
const MAX_LINES = 600;

/** The non-test .ts files below `folder` (relative to the repository), build output left out. */
function sourceFiles(folder: string): string[] {
  return readdirSync(path.join(ROOT, folder), { withFileTypes: true }).flatMap((entry) => {
    const relative = path.posix.join(folder, entry.name);
    if (entry.isDirectory()) {
      return ['node_modules', 'dist'].includes(entry.name) || entry.name.startsWith('.')
        ? []
        : sourceFiles(relative);
    }
    return entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('spec.ts')
      ? [relative]
      : [];
  });
}

/** Lines as `wc -l` counts them (a last line without its newline counts too). */
function lineCount(text: string): number {
  const newlines = text.split('\n').length - 1;
  return text === '' || text.endsWith('\n') ? newlines : newlines + 1;
}

const files = FOLDERS.flatMap(sourceFiles);

describe('source file size', () => {
  it('reads the source of every folder and no test', () => {
    for (const folder of FOLDERS) {
      expect(files.filter((file) => file.startsWith(`${folder}/`)).length).toBeGreaterThan(0);
    }
    expect(files).toContain('libs/kafka/src/consumer-runner.ts');
    expect(files).toContain('scripts/chaos/chaos-run.ts');
    expect(files.filter((file) => /spec\.ts$|\/(node_modules|dist)\//.test(file))).toEqual([]);
  });

  it('counts lines as wc -l does', () => {
    expect([
      lineCount(''),
      lineCount('a'),
      lineCount('a\n'),
      lineCount('a\nb'),
      lineCount('\n\n'),
    ]).toEqual([0, 1, 1, 2, 2]);
  });

  it(`has no non-test source file over ${MAX_LINES} lines`, () => {
    const over = files
      .map((file) => ({ file, lines: lineCount(readFileSync(path.join(ROOT, file), 'utf8')) }))
      .filter(({ lines }) => lines > MAX_LINES)
      .map(({ file, lines }) => `${file}: ${lines} lines`);
    expect(over).toEqual([]);
  });
});
