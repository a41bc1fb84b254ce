import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { DiagnosticSeverity, Parser } from '@asyncapi/parser';
import { buildAsyncApiDocument } from './asyncapi';
import { GatewayRequest } from './gateway';
import { GatewayOperation } from './primitives';
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

  it('describes every schema of the gateway request union, and through them every operation', async () => {
    const built = buildAsyncApiDocument() as {
      channels: { gatewayRequests: { messages: Record<string, unknown> } };
      components: { schemas: Record<string, { properties?: { operation?: OperationSchema } }> };
    };
    const names = Object.keys(built.channels.gatewayRequests.messages);
    expect(names).toHaveLength(GatewayRequest.options.length);
    const operations = names.flatMap((name) => {
      const operation = built.components.schemas[name]?.properties?.operation;
      return operation?.const === undefined ? (operation?.enum ?? []) : [operation.const];
    });
    expect([...operations].sort()).toEqual([...GatewayOperation.options].sort());
    // …and the document with all of them is valid AsyncAPI.
    const { diagnostics } = await new Parser().parse(JSON.stringify(built));
    expect(
      diagnostics.filter((d) => Number(d.severity) === Number(DiagnosticSeverity.Error)),
    ).toEqual([]);
  });
});

interface OperationSchema {
  readonly const?: string;
  readonly enum?: readonly string[];
}
