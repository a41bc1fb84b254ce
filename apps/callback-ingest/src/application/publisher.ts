import { Inject, Injectable } from '@nestjs/common';
import {
  type CallbackMessage,
  CE_SOURCES,
  type PaymentCommand,
  StatusCheckHint,
  ceType,
  TOPICS,
  toKafkaHeaders,
} from '@payments/contracts';
import { KafkaProducerService } from '@payments/kafka';
import { messageTraceparent } from '@payments/observability';
import { CALLBACK_INGEST_CONFIG, type CallbackIngestConfig } from '../config';
import { type CallbackMetrics } from './metrics';
import { CALLBACK_METRICS } from './tokens';

/**
 * Writes callback messages to payments.gateway.callbacks.v1: key = payment id, CloudEvents binary
 * headers (ce_id = notificationId, ce_subject = payment id, traceparent continuing the caller's
 * trace). Resolves only when the broker acknowledged (acks=all, idempotent producer); rejects on
 * failure or after the publish timeout — the outcome is then unknown (it may still land), which
 * is harmless: the gateway retries and ce_id makes the repeat a duplicate.
 */
@Injectable()
export class CallbackPublisher {
  constructor(
    private readonly producer: KafkaProducerService,
    @Inject(CALLBACK_INGEST_CONFIG) private readonly config: CallbackIngestConfig,
    @Inject(CALLBACK_METRICS) private readonly metrics: CallbackMetrics,
  ) {}

  /**
   * A command on payments.commands.v1 (the 3-D Secure hand-back, domain/hand-back.ts): key =
   * payment id, ce_id = command id. Resolves only when the broker acknowledged.
   */
  async publishCommand(command: PaymentCommand, incomingTraceparent?: string): Promise<void> {
    const headers = toKafkaHeaders({
      id: command.commandId,
      type: ceType.command(command.type),
      source: CE_SOURCES.callbackIngest,
      subject: command.paymentId,
      time: command.occurredAt,
      traceparent: messageTraceparent(TOPICS.commands, incomingTraceparent),
    });
    const stop = this.metrics.publishSeconds.startTimer({ kind: 'command' });
    try {
      await this.producer.send(
        TOPICS.commands,
        [{ key: command.paymentId, value: command, headers }],
        { timeoutMs: this.config.callbacks.publishTimeoutMs },
      );
    } catch (error) {
      stop({ outcome: 'failed' });
      this.metrics.publishFailed.inc({ kind: 'command' });
      throw error;
    }
    stop({ outcome: 'acknowledged' });
    this.metrics.published.inc({ kind: 'command', source: 'browser-return' });
  }

  /**
   * A callback comes from decide, which returns only what GatewayCallback's check gave back
   * (domain/decide.ts): it is not parsed a second time here. A hint is checked here.
   */
  async publish(message: CallbackMessage, incomingTraceparent?: string): Promise<void> {
    const value = message.kind === 'callback' ? message : StatusCheckHint.parse(message);
    const headers = toKafkaHeaders({
      id: value.notificationId,
      type: ceType.callback(value.kind),
      source: CE_SOURCES.callbackIngest,
      subject: value.paymentId,
      time: value.receivedAt,
      traceparent: messageTraceparent(TOPICS.gatewayCallbacks, incomingTraceparent),
    });
    const stop = this.metrics.publishSeconds.startTimer({ kind: value.kind });
    try {
      await this.producer.send(
        TOPICS.gatewayCallbacks,
        [{ key: value.paymentId, value, headers }],
        {
          timeoutMs: this.config.callbacks.publishTimeoutMs,
        },
      );
    } catch (error) {
      stop({ outcome: 'failed' });
      this.metrics.publishFailed.inc({ kind: value.kind });
      throw error;
    }
    stop({ outcome: 'acknowledged' });
    this.metrics.published.inc({
      kind: value.kind,
      source: value.kind === 'callback' ? value.source : 'hint',
    });
  }
}
