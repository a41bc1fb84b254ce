import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { DiagnosticSeverity, Parser } from '@asyncapi/parser';
import { buildAsyncApiDocument } from './asyncapi';
import { ALL_TOPICS } from './topics';

const FILE = resolve(__dirname, '../../../docs/asyncapi/asyncapi.json');

describe('AsyncAPI document', () => {
  it('parses with @asyncapi/parser without errors', async () => {
    const { document, diagnostics } = await new Parser().parse(
      JSON.stringify(buildAsyncApiDocument()),
    );
    const errors = diagnostics.filter(
      (d) => Number(d.severity) === Number(DiagnosticSeverity.Error),
    );
    expect(errors.map((d) => `${d.path.join('.')}: ${d.message}`)).toEqual([]);
    expect(document).toBeDefined();
    expect(
      document!
        .channels()
        .all()
        .map((c) => c.address())
        .sort(),
    ).toEqual([...ALL_TOPICS].sort());
  });

  it('the published docs/asyncapi/asyncapi.json equals a fresh generation (run npm run asyncapi:generate)', () => {
    const published: unknown = JSON.parse(readFileSync(FILE, 'utf8'));
    expect(published).toEqual(JSON.parse(JSON.stringify(buildAsyncApiDocument())));
  });
});
