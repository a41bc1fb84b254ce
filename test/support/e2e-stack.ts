import { createTestDatabase, type TestDatabase } from '@payments/testing';
import { tokenHash } from '../../apps/orchestrator/src/domain/admin/admin-tokens';
import { PaymentStack, type PaymentStackOptions } from '../../scripts/stack/payment-stack';
import { buildApps } from '../../scripts/stack/processes';

/** The stack of one e2e suite with its two fresh databases; `stop` ends and drops them all. */
export interface E2eStack {
  readonly stack: PaymentStack;
  readonly orchestratorDb: TestDatabase;
  readonly adapterDb: TestDatabase;
  stop(): Promise<void>;
}

type SuiteOptions = Omit<
  PaymentStackOptions,
  'kafkaBrokers' | 'orchestratorDatabaseUrl' | 'adapterDatabaseUrl'
>;

/**
 * Builds the apps (once per process), creates the databases `e2e_<name>_orchestrator` and
 * `e2e_<name>_adapter` and starts the four apps on the worker's broker (`KAFKA_BROKERS`). The
 * suite's `beforeAll` calls it and its `afterAll` calls `stop`.
 */
export async function startE2eStack(name: string, options: SuiteOptions = {}): Promise<E2eStack> {
  await buildApps();
  const orchestratorDb = await createTestDatabase(`e2e_${name}_orchestrator`);
  const adapterDb = await createTestDatabase(`e2e_${name}_adapter`).catch(
    async (error: unknown) => {
      await orchestratorDb.drop();
      throw error;
    },
  );
  let stack: PaymentStack;
  try {
    stack = await PaymentStack.start({
      ...options,
      kafkaBrokers: (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(','),
      orchestratorDatabaseUrl: orchestratorDb.url,
      adapterDatabaseUrl: adapterDb.url,
    });
  } catch (error) {
    await orchestratorDb.drop();
    await adapterDb.drop();
    throw error;
  }
  return {
    stack,
    orchestratorDb,
    adapterDb,
    async stop() {
      await stack.stop();
      await orchestratorDb.drop();
      await adapterDb.drop();
    },
  };
}

/** One person of the orchestrator's ADMIN_TOKENS: the token itself, stored as its SHA-256. */
export interface AdminPerson {
  readonly name: string;
  readonly role: 'viewer' | 'operator' | 'approver';
  readonly scope?: 'all' | { readonly endpoints: readonly string[] };
  readonly token: string;
}

/** The orchestrator's ADMIN_TOKENS for these people, each token stored as its hash (as deployed). */
export function adminTokens(people: readonly AdminPerson[]): string {
  return JSON.stringify(
    people.map(({ token, ...person }) => ({ ...person, sha256: tokenHash(token) })),
  );
}

/**
 * A preauth of 100.00 USD, a partial capture of 60.00 and two partial returns of 10.00 and 20.00,
 * each step awaited (the finance suites' day of card traffic). Answers the payment id.
 */
export async function capturedAndReturnedTwice(stack: PaymentStack): Promise<string> {
  const preauth = stack.preauth({ amountMinor: 10_000 });
  const { paymentId } = preauth;
  await stack.send(preauth);
  await stack.events.waitForType(paymentId, ['authorized'], 60_000);
  await stack.send(stack.capture(paymentId, 6_000));
  await stack.events.waitForType(paymentId, ['captured'], 60_000);
  await stack.send(stack.return(paymentId, 1_000));
  await stack.events.waitFor(paymentId, (e) => e.type === 'returned', 60_000);
  await stack.send(stack.return(paymentId, 2_000));
  await stack.events.waitFor(
    paymentId,
    (e) => e.type === 'returned' && e.totalReturned.minor === 3_000,
    60_000,
  );
  return paymentId;
}
