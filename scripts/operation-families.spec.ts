/**
 * One operation's three rows sit in files of one name (issue #37): the gateway sandbox's handler
 * (`apps/gateway-sandbox/src/domain/engine/families/<family>.ts`, routed by `routes.ts`), the
 * client catalogue's definition (`libs/payment-gateway/src/families/<family>.ts`) and the
 * adapter's operation-table row (`apps/gateway-adapter/src/domain/families/<family>.ts`). The
 * sandbox never imports the client (it is its oracle), so its routes are read as text.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { GatewayOperation } from '@payments/contracts';
import { OPERATIONS, type OperationId } from '@payments/payment-gateway';

const ROOT = join(__dirname, '..');
const SANDBOX = join(ROOT, 'apps/gateway-sandbox/src/domain/engine');
const CLIENT = join(ROOT, 'libs/payment-gateway/src/families');
const ADAPTER = join(ROOT, 'apps/gateway-adapter/src/domain/families');

const familiesIn = (dir: string) =>
  readdirSync(dir)
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.spec.ts'))
    .map((f) => f.replace(/\.ts$/, ''))
    .sort();

/** The one exported table of a family module (`…_OPERATIONS`, `…_ROWS`). */
function tableOf<T>(dir: string, family: string, suffix: string): Record<string, T> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const module = require(join(dir, family)) as Record<string, unknown>;
  const tables = Object.entries(module).filter(([name]) => name.endsWith(suffix));
  if (tables.length !== 1) throw new Error(`${family}: ${tables.length} tables named *${suffix}`);
  return tables[0][1] as Record<string, T>;
}

/** The sandbox's routes: operation name (`SALE`) → the family file its handler is imported from. */
function sandboxFamilies(): Map<string, string> {
  const text = readFileSync(join(SANDBOX, 'routes.ts'), 'utf8');
  const fileOf = new Map<string, string>();
  for (const m of text.matchAll(/import \{([^}]*)\} from '\.\/families\/([\w-]+)';/g)) {
    for (const name of m[1].split(',').map((n) => n.trim()))
      if (name !== '') fileOf.set(name, m[2]);
  }
  const routes = new Map<string, string>();
  const table = text.slice(text.indexOf('export const ROUTES'));
  for (const m of table.matchAll(/^\s+([A-Z0-9_]+): (?:\([^)]*\) => )?(\w+)/gm)) {
    const file = fileOf.get(m[2]);
    if (file !== undefined) routes.set(m[1], file);
  }
  return routes;
}

describe("one operation's three rows: files of one name", () => {
  it('the sandbox, the client and the adapter have the same operation families', () => {
    const sandbox = familiesIn(join(SANDBOX, 'families'));
    expect(familiesIn(CLIENT)).toEqual(sandbox);
    expect(familiesIn(ADAPTER)).toEqual(sandbox);
  });

  it("the client's definition of each operation is in the family whose sandbox file handles it", () => {
    const routes = sandboxFamilies();
    const misplaced: string[] = [];
    let defined = 0;
    for (const family of familiesIn(CLIENT)) {
      for (const [id, def] of Object.entries(
        tableOf<{ name: string }>(CLIENT, family, '_OPERATIONS'),
      )) {
        defined += 1;
        const handled = routes.get(def.name);
        if (handled !== family)
          misplaced.push(`${id} (${def.name}): client ${family}, sandbox ${handled}`);
      }
    }
    expect(misplaced).toEqual([]);
    expect(defined).toBe(Object.keys(OPERATIONS).length);
    expect(routes.size).toBe(defined);
  });

  it("the adapter's row of each contract operation is in the family of the client operation it calls", () => {
    const clientFamily = new Map<string, string>();
    for (const family of familiesIn(CLIENT))
      for (const id of Object.keys(tableOf(CLIENT, family, '_OPERATIONS')))
        clientFamily.set(id, family);
    const misplaced: string[] = [];
    const rows: string[] = [];
    for (const family of familiesIn(ADAPTER)) {
      const table = tableOf<{ catalogue: OperationId }>(ADAPTER, family, '_ROWS');
      for (const [operation, row] of Object.entries(table)) {
        rows.push(operation);
        const called = clientFamily.get(row.catalogue);
        if (called !== family)
          misplaced.push(`${operation} → ${row.catalogue}: adapter ${family}, client ${called}`);
      }
    }
    expect(misplaced).toEqual([]);
    // Each contract operation once (the merged table compiles only with every one of them).
    expect([...rows].sort()).toEqual([...GatewayOperation.options].sort());
  });
});
