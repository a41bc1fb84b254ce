import { randomUUID } from 'node:crypto';
import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { BackgroundLoop, maskCardNumbers, withTimeout } from '@payments/core';
import { CORRELATION_ID_HEADER, ROOT_LOGGER } from '@payments/logging';
import type { Logger } from 'pino';
import { ADAPTER_REASONS } from '../domain/classify';
import { EndpointLanes } from '../domain/endpoint-lanes';
import { GATEWAY_ADAPTER_CONFIG, type GatewayAdapterConfig } from '../config';
import { type HandoffRecord, RequestHandoffs } from '../persistence/request-handoffs';
import { GATEWAY_ENDPOINTS } from '../tokens';
import type { GatewayEndpoints } from './gateway-endpoints';
import { adapterMetrics } from './metrics';
import { ResultPublisher } from './result-publisher';

/** How long a graceful stop waits for accepted requests to be answered before leaving them. */
const DRAIN_TIMEOUT_MS = 20_000;
/** Expired hand-offs answered per sweep transaction. */
const SWEEP_BATCH = 100;

/** The message headers a handed-off request's answer continues (trace and correlation only). */
export function answerHeaders(
  headers: Readonly<Record<string, string>>,
): Readonly<Record<string, string>> {
  const kept: Record<string, string> = {};
  for (const name of ['traceparent', 'tracestate', CORRELATION_ID_HEADER]) {
    const value = headers[name];
    if (value !== undefined) kept[name] = value;
  }
  return kept;
}

/**
 * Owns what keeps the hand-off safe in this process: the endpoint lanes requests run in, this
 * process's owner id and the leases of the requests it runs (renewed every third of the lease),
 * and the sweep that answers `unknown` for requests a stopped replica (this one before a crash,
 * or another) accepted and never answered. The answer carries the same `ce_id` as the owner's
 * would (request id + attempt), and the orchestrator takes the first answer of an attempt (its
 * inbox): a late owner that still answers after a sweep is ignored.
 */
@Injectable()
export class HandoffKeeper implements OnApplicationBootstrap, BeforeApplicationShutdown {
  readonly owner = randomUUID();
  readonly lanes: EndpointLanes;
  readonly leaseMs: number;
  private readonly live = new Map<string, { requestId: string; attempt: number }>();
  private readonly loop: BackgroundLoop;
  private readonly metrics = adapterMetrics();

  constructor(
    @Inject(GATEWAY_ADAPTER_CONFIG) config: GatewayAdapterConfig,
    @Inject(GATEWAY_ENDPOINTS) endpoints: GatewayEndpoints,
    @Inject(ROOT_LOGGER) private readonly logger: Logger,
    private readonly handoffs: RequestHandoffs,
    private readonly publisher: ResultPublisher,
  ) {
    this.leaseMs = config.handoff.leaseMs;
    this.lanes = new EndpointLanes(
      (endpointId) => endpoints.find(endpointId)?.limits.maxQueued ?? config.limits.maxQueued,
      (endpointId, count) =>
        this.metrics.laneRequests.set(
          { endpoint: endpoints.find(endpointId)?.name ?? endpointId },
          count,
        ),
    );
    this.loop = new BackgroundLoop({
      runOnce: () => this.round(),
      idleMs: Math.max(100, Math.floor(this.leaseMs / 3)),
      backoffMs: (failures) => Math.min(this.leaseMs / 3, 250 * 2 ** failures),
      onError: (error, failures) =>
        this.logger.warn(
          {
            failures,
            error: maskCardNumbers(error instanceof Error ? error.message : String(error)),
          },
          'hand-off lease renewal or sweep failed; retrying',
        ),
    });
  }

  onApplicationBootstrap(): void {
    this.loop.start();
  }

  /** Before the database and the producer close: answer what is accepted, within a bound. */
  async beforeApplicationShutdown(): Promise<void> {
    try {
      await withTimeout(this.lanes.whenIdle(), DRAIN_TIMEOUT_MS, 'accepted gateway requests');
    } catch {
      this.logger.warn(
        { outstanding: this.lanes.total },
        'accepted gateway requests not answered in time; another replica answers them unknown once their lease runs out',
      );
    }
    await this.loop.stop();
  }

  track(requestId: string, attempt: number): void {
    this.live.set(`${requestId}/${attempt}`, { requestId, attempt });
  }

  untrack(requestId: string, attempt: number): void {
    this.live.delete(`${requestId}/${attempt}`);
  }

  /** One round: renew this process's leases, then answer expired hand-offs of stopped owners. */
  async round(): Promise<'busy' | 'idle'> {
    await this.handoffs.renew(this.owner, [...this.live.values()], this.leaseMs);
    const swept = await this.handoffs.sweep(SWEEP_BATCH, (record) => this.answerLost(record));
    return swept === SWEEP_BATCH ? 'busy' : 'idle';
  }

  private async answerLost(record: HandoffRecord): Promise<void> {
    const result = { kind: 'unknown', reason: ADAPTER_REASONS.handoffLost } as const;
    await this.publisher.publish(record, result, record.headers);
    this.metrics.results.inc({ operation: record.operation, kind: result.kind, source: 'adapter' });
    this.logger.warn(
      {
        requestId: record.requestId,
        paymentId: record.paymentId,
        operation: record.operation,
        attempt: record.attempt,
        endpointId: record.endpointId,
        result: result.kind,
        reason: result.reason,
        source: 'adapter',
      },
      'gateway request handled',
    );
  }
}
