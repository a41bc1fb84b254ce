import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { format, resolveConfig } from 'prettier';
import { buildAsyncApiDocument } from './asyncapi';

/** `npm run asyncapi:generate`: writes docs/asyncapi/asyncapi.json (Prettier-formatted). */
export const ASYNCAPI_FILE = resolve(__dirname, '../../../docs/asyncapi/asyncapi.json');

async function main(): Promise<void> {
  const options = (await resolveConfig(ASYNCAPI_FILE)) ?? {};
  const text = await format(JSON.stringify(buildAsyncApiDocument()), {
    ...options,
    parser: 'json',
  });
  writeFileSync(ASYNCAPI_FILE, text);
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exitCode = 1;
});
