import { PaymentGatewayClient } from '@payments/payment-gateway';
import { CircuitBreaker } from '../domain/circuit-breaker';
import { type Clock } from '@payments/core';
import { Semaphore } from '../domain/semaphore';
import {
  DEFAULT_BACKGROUND_SHARE,
  defaultUrgentReserve,
  DEFAULT_STATUS_WAIT_MS,
  StatusBudget,
  type Wake,
} from '../domain/status-budget';
import { TokenBucket } from '../domain/token-bucket';
import { adapterMetrics, BREAKER_STATE_VALUE } from './metrics';
import type { EndpointCredentials, EndpointLimits } from '../secrets/credentials';

/**
 * The status budgets' timers (their waiting rooms, at most one pending per endpoint): unref'd,
 * so a query waiting never keeps a stopping process alive.
 */
const timerWake: Wake = (fn, delayMs) => {
  const timer = setTimeout(fn, Math.max(0, delayMs));
  timer.unref();
  return () => clearTimeout(timer);
};

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
 * One replica's share of an endpoint's rate limits: the gateway counts every replica's calls
 * against one rate, so with `replicas` of the adapter each takes 1/replicas of the rate and of the
 * burst (at least one token) — no shared store on the way of each call. Kafka spreads payments
 * over the replicas' partitions evenly; a skew leaves part of the rate unused, never exceeded.
 */
export function replicaShare(limits: EndpointLimits, replicas: number): EndpointLimits {
  if (replicas <= 1) return limits;
  const burst = (n: number) => Math.max(1, Math.floor(n / replicas));
  const shared = {
    ...limits,
    ratePerSecond: limits.ratePerSecond / replicas,
    burst: burst(limits.burst),
    statusRatePerSecond: limits.statusRatePerSecond / replicas,
    statusBurst: burst(limits.statusBurst),
  };
  // The money reserve must stay below the replica's burst, or no status query could be sent.
  return {
    ...shared,
    moneyReservedTokens: Math.min(
      Math.floor(limits.moneyReservedTokens / replicas),
      shared.burst - 1,
    ),
  };
}

/**
 * The registry that picks the endpoint for a request (`merchant.endpointId`: an endpoint id, or
 * an endpoint-group id). Built once at boot from the checked credentials; the secrets live on in
 * the clients only. `replicas`: how many adapters share each endpoint's rate (replicaShare).
 */
export class GatewayEndpoints {
  private readonly byId = new Map<string, GatewayEndpoint>();

  constructor(
    credentials: readonly EndpointCredentials[],
    transport: TransportSettings,
    clock: Clock,
    replicas = 1,
  ) {
    const { breakerState } = adapterMetrics();
    for (const entry of credentials) {
      const c = { ...entry, limits: replicaShare(entry.limits, replicas) };
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
            urgentReservedTokens: defaultUrgentReserve(c.limits.statusBurst),
            backgroundShare: DEFAULT_BACKGROUND_SHARE,
            // The waiting room: never longer than a money operation may wait for its token.
            waitMs: Math.min(DEFAULT_STATUS_WAIT_MS, c.limits.maxWaitMs),
          },
          bucket,
          slots,
          clock,
          timerWake,
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
