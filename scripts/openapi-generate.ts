import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { format, resolveConfig } from 'prettier';
import { buildAdminOpenApiDocument } from '../apps/orchestrator/src/transport/http/admin-openapi';

/** `npm run openapi:generate`: writes docs/openapi/admin.json (Prettier-formatted). */
const FILE = resolve(__dirname, '../docs/openapi/admin.json');

async function main(): Promise<void> {
  const options = (await resolveConfig(FILE)) ?? {};
  const text = await format(JSON.stringify(await buildAdminOpenApiDocument()), {
    ...options,
    parser: 'json',
  });
  writeFileSync(FILE, text);
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exitCode = 1;
});
