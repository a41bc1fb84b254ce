/**
 * The gateway sandbox for the gateway-adapter's integration tests: the sandbox's own Nest module,
 * in this process, serving real HTTP on a free port with its test controls on. (In-process rather
 * than a child process: it needs decorator metadata, which only a tsc build provides, and the
 * jest transform already does; the adapter reaches it over the network either way.)
 */
import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { loadConfig } from '@payments/config';
import { sandboxConfigShape, type SandboxConfig } from '../../apps/gateway-sandbox/src/config';
import { AppModule as SandboxModule } from '../../apps/gateway-sandbox/src/app.module';

/** The default merchant of apps/gateway-sandbox/sandbox.merchants.json (test-only values). */
export const SANDBOX_MERCHANT = {
  login: 'sandbox-merchant',
  controlKey: 'B17F59B4-A7DC-41B4-8FF9-37D986B43D20',
  rsaPrivateKeyFile: 'apps/gateway-sandbox/test-keys/merchant-test-private.pem',
  /** USD, no 3-D Secure. */
  endpointId: '1113',
} as const;

export interface LedgerView {
  readonly entries: ReadonlyArray<{ movement: string; amountMinor: number; clientOrderId: string }>;
  readonly totals: Readonly<Record<string, number>>;
}

export interface FaultInput {
  readonly clientOrderId?: string;
  readonly operation?: string;
  readonly latencyMs?: number;
  readonly failBefore?: number;
  readonly failAfter?: number | 'drop';
  readonly times?: number;
}

export interface TestSandbox {
  /** Gateway API root for credentials, e.g. http://127.0.0.1:41234/paynet */
  readonly baseUrl: string;
  readonly origin: string;
  ledger(clientOrderId: string): Promise<LedgerView>;
  addFault(fault: FaultInput): Promise<{ id: string }>;
  /** Requests a fault rule has matched so far (a rule with `times` counts down `remaining`). */
  faultRemaining(id: string): Promise<number | undefined>;
  order(orderId: string): Promise<{ status: string } & Record<string, unknown>>;
  close(): Promise<void>;
}

async function json<T>(response: Response): Promise<T> {
  if (!response.ok) throw new Error(`sandbox control answered ${response.status}`);
  return (await response.json()) as T;
}

export async function startTestSandbox(env: Record<string, string> = {}): Promise<TestSandbox> {
  const config = loadConfig('gateway-sandbox', sandboxConfigShape, {
    SANDBOX_TEST_CONTROLS: 'true',
    SANDBOX_CALLBACK_ATTEMPTS: '1',
    LOG_LEVEL: 'silent',
    ...env,
  }) as SandboxConfig;
  const app: INestApplication = await NestFactory.create(SandboxModule.forRoot(config), {
    bodyParser: false,
    logger: false,
  });
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address() as { port: number };
  const origin = `http://127.0.0.1:${address.port}`;
  const control = (path: string, init?: RequestInit) => fetch(`${origin}/_sandbox${path}`, init);
  return {
    baseUrl: `${origin}/paynet`,
    origin,
    ledger: async (clientOrderId) =>
      json<LedgerView>(await control(`/ledger?clientOrderId=${encodeURIComponent(clientOrderId)}`)),
    addFault: async (fault) =>
      json<{ id: string }>(
        await control('/faults', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(fault),
        }),
      ),
    faultRemaining: async (id) => {
      const rules = await json<Array<{ id: string; remaining?: number }>>(await control('/faults'));
      return rules.find((r) => r.id === id)?.remaining;
    },
    order: async (orderId) =>
      json<{ status: string } & Record<string, unknown>>(
        await control(`/orders/${encodeURIComponent(orderId)}`),
      ),
    close: () => app.close(),
  };
}
