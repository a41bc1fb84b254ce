import { PaymentGatewayClient } from '@payments/payment-gateway';
import { CircuitBreaker } from '../domain/circuit-breaker';
import { type Clock } from '@payments/core';
import { Semaphore } from '../domain/semaphore';
import { StatusBudget } from '../domain/status-budget';
import { TokenBucket } from '../domain/token-bucket';
import { adapterMetrics, BREAKER_STATE_VALUE } from './metrics';
import type { EndpointCredentials, EndpointLimits } from '../secrets/credentials';

export interface TransportSettings {
  readonly connectTimeoutMs: number;
  readonly responseTimeoutMs: number;
}

/** One merchant endpoint (or group): its signed client and its guards. */
export interface GatewayEndpoint {
  readonly name: string;
  readonly id: string;
  readonly client: PaymentGatewayClient;
  readonly limits: EndpointLimits;
  /** How create-card-ref is signed (v2 control or v4 RSA-SHA256). */
  readonly cardRefApi: 'v2' | 'v4';
  readonly breaker: CircuitBreaker;
  readonly bucket: TokenBucket;
  readonly slots: Semaphore;
  /** Status queries: their own bounded budget, after money operations (domain/status-budget). */
  readonly statusBudget: StatusBudget;
}

/**
 * The registry that picks the endpoint for a request (`merchant.endpointId`: an endpoint id, or
 * an endpoint-group id). Built once at boot from the checked credentials; the secrets live on in
 * the clients only.
 */
export class GatewayEndpoints {
  private readonly byId = new Map<string, GatewayEndpoint>();

  constructor(
    credentials: readonly EndpointCredentials[],
    transport: TransportSettings,
    clock: Clock,
  ) {
    const { breakerState } = adapterMetrics();
    for (const c of credentials) {
      const client = new PaymentGatewayClient({
        baseUrl: c.baseUrl,
        endpoint: c.endpoint,
        login: c.login,
        controlKey: c.controlKey,
        ...(c.rsaPrivateKey ? { rsaPrivateKey: c.rsaPrivateKey } : {}),
        currencyExponents: c.currencyExponents,
        replyFormat: c.replyFormat,
        transport: {
          connections: c.limits.maxConcurrent,
          connectTimeoutMs: transport.connectTimeoutMs,
          headersTimeoutMs: transport.responseTimeoutMs,
          bodyTimeoutMs: transport.responseTimeoutMs,
        },
        clock: () => clock.now(),
      });
      breakerState.set({ endpoint: c.name }, BREAKER_STATE_VALUE.closed);
      const bucket = new TokenBucket(
        { ratePerSecond: c.limits.ratePerSecond, burst: c.limits.burst },
        clock,
      );
      const slots = new Semaphore(c.limits.maxConcurrent);
      this.byId.set(c.id, {
        name: c.name,
        id: c.id,
        client,
        limits: c.limits,
        cardRefApi: c.cardRefApi,
        breaker: new CircuitBreaker(
          { failureThreshold: c.limits.breakerFailures, cooldownMs: c.limits.breakerCooldownMs },
          clock,
          (state) => breakerState.set({ endpoint: c.name }, BREAKER_STATE_VALUE[state]),
        ),
        bucket,
        slots,
        statusBudget: new StatusBudget(
          {
            ratePerSecond: c.limits.statusRatePerSecond,
            burst: c.limits.statusBurst,
            moneyReservedTokens: c.limits.moneyReservedTokens,
            minIntervalMs: c.limits.statusMinIntervalMs,
            slotWaitMs: c.limits.maxWaitMs,
          },
          bucket,
          slots,
          clock,
        ),
      });
    }
  }

  find(endpointId: string): GatewayEndpoint | undefined {
    return this.byId.get(endpointId);
  }

  list(): GatewayEndpoint[] {
    return [...this.byId.values()];
  }

  async close(): Promise<void> {
    await Promise.all(this.list().map((e) => e.client.close()));
  }
}
