import { Inject, Injectable } from '@nestjs/common';
import {
  CE_SOURCES,
  ceType,
  type GatewayClassification,
  type GatewayOperation,
  type GatewayRequest,
  GatewayResult,
  type StatusPriority,
  toKafkaHeaders,
  TOPICS,
} from '@payments/contracts';
import { KafkaProducerService } from '@payments/kafka';
import { messageTraceparent } from '@payments/observability';
import { CORRELATION_ID_HEADER } from '@payments/logging';
import type { Clock } from '@payments/core';
import { resultEventId } from '../domain/result-id';
import { ADAPTER_CLOCK } from '../tokens';

/** Whom a result answers: a request's addressing fields (a handed-off request's row has them). */
export interface ResultAddress {
  readonly requestId: string;
  readonly paymentId: string;
  readonly operation: GatewayOperation;
  readonly attempt: number;
  /** For `status`: the request whose status was asked. */
  readonly subjectRequestId?: string;
  /** For `status`: its class (echoed on a held query's result, GatewayResult `priority`). */
  readonly priority?: StatusPriority;
  /** For `status`: when its urgency began (echoed with `priority`, GatewayResult `urgentSince`). */
  readonly urgentSince?: string;
}

export function addressOf(request: GatewayRequest): ResultAddress {
  return {
    requestId: request.requestId,
    paymentId: request.paymentId,
    operation: request.operation,
    attempt: request.attempt,
    ...(request.operation === 'status' ? { subjectRequestId: request.subjectRequestId } : {}),
    ...(request.operation === 'status' && request.priority !== undefined
      ? { priority: request.priority }
      : {}),
    ...(request.operation === 'status' && request.urgentSince !== undefined
      ? { urgentSince: request.urgentSince }
      : {}),
  };
}

/**
 * What a status query's result echoes of its request (GatewayResult `priority`, `urgentSince`):
 * for one held back (`not-sent`) or not answered by the gateway (`unknown`: a 5xx, a timeout),
 * so the orchestrator asks again in its class (its heldPoll) — a hinted query within seconds,
 * urgent no longer than its urgency lasts from when it began. Nothing for an answer, a money
 * operation or a request that named no class.
 */
export function statusClassEcho(
  request: ResultAddress,
  result: GatewayClassification,
): Pick<GatewayResult, 'priority' | 'urgentSince'> {
  if (request.operation !== 'status' || request.priority === undefined) return {};
  if (result.kind !== 'not-sent' && result.kind !== 'unknown') return {};
  return {
    priority: request.priority,
    ...(request.urgentSince === undefined ? {} : { urgentSince: request.urgentSince }),
  };
}

/**
 * Publishes one GatewayResult to `payments.gateway.results.v1`, keyed by the payment id, with
 * CloudEvents binary headers: `ce_id` stable per request id and attempt (a result published
 * twice dedupes downstream), `ce_subject` = payment id, the request's trace continued.
 */
@Injectable()
export class ResultPublisher {
  constructor(
    private readonly producer: KafkaProducerService,
    @Inject(ADAPTER_CLOCK) private readonly clock: Clock,
  ) {}

  async publish(
    request: ResultAddress,
    result: GatewayClassification,
    incoming: Readonly<Record<string, string>>,
    /** When the gateway's answer came; absent when it gave none (not-sent, unknown, our own). */
    answeredAt?: string,
  ): Promise<GatewayResult> {
    const completedAt = new Date(this.clock.now()).toISOString();
    const value = GatewayResult.parse({
      requestId: request.requestId,
      paymentId: request.paymentId,
      operation: request.operation,
      ...(request.operation === 'status' && request.subjectRequestId !== undefined
        ? { subjectRequestId: request.subjectRequestId }
        : {}),
      attempt: request.attempt,
      result,
      ...statusClassEcho(request, result),
      completedAt,
      ...(answeredAt === undefined ? {} : { answeredAt }),
    });
    const tracestate = incoming.tracestate;
    const headers: Record<string, string> = toKafkaHeaders({
      id: resultEventId(request.requestId, request.attempt),
      type: ceType.gatewayResult(request.operation),
      source: CE_SOURCES.gatewayAdapter,
      subject: request.paymentId,
      time: completedAt,
      traceparent: messageTraceparent(TOPICS.gatewayResults, incoming.traceparent),
      ...(tracestate !== undefined && incoming.traceparent !== undefined ? { tracestate } : {}),
    });
    const correlationId = incoming[CORRELATION_ID_HEADER];
    if (correlationId !== undefined) headers[CORRELATION_ID_HEADER] = correlationId;
    await this.producer.send(TOPICS.gatewayResults, [{ key: request.paymentId, value, headers }]);
    return value;
  }
}
