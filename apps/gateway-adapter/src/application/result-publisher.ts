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
      // A held status query is asked again in its class (the orchestrator's heldPoll), urgent
      // no longer than its urgency lasts from when it began.
      ...(request.operation === 'status' &&
      result.kind === 'not-sent' &&
      request.priority !== undefined
        ? {
            priority: request.priority,
            ...(request.urgentSince === undefined ? {} : { urgentSince: request.urgentSince }),
          }
        : {}),
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
