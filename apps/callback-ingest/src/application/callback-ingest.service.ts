import { Inject, Injectable } from '@nestjs/common';
import type { StatusCheckHint } from '@payments/contracts';
import { errorMessage } from '@payments/kafka';
import { PinoLogger } from '@payments/logging';
import { CLOCK, type Clock } from '../domain/clock';
import type { ControlKeyStore } from '../domain/control-keys';
import { decide, type RejectionCode } from '../domain/decide';
import { type HandBackCommand, handBackCommand } from '../domain/hand-back';
import type { HintLimiter } from '../domain/hint-limiter';
import type { CallbackSource } from '../domain/notification-id';
import type { CallbackMetrics } from './metrics';
import { CallbackPublisher } from './publisher';
import { CALLBACK_METRICS, CONTROL_KEYS, HINT_LIMITER } from './tokens';

export interface IngestRequest {
  readonly endpointId: string;
  readonly source: CallbackSource;
  readonly params: Readonly<Record<string, string>>;
  readonly traceparent?: string;
}

export type IngestOutcome =
  /** Verified and acknowledged by the broker: the only outcome that may answer 200. */
  | { readonly kind: 'accepted'; readonly notificationId: string; readonly paymentId: string }
  /** Verified, but the broker did not acknowledge in time: the gateway must retry. */
  | { readonly kind: 'unavailable'; readonly paymentId: string }
  | {
      readonly kind: 'rejected';
      readonly code: RejectionCode;
      readonly message: string;
      readonly paymentId?: string;
    }
  | { readonly kind: 'unknown-endpoint' };

/**
 * The one use case of callback-ingest: verify a notification, publish it, and say whether it is
 * durable. Controllers only translate HTTP to an IngestRequest and the outcome back to HTTP.
 * Nothing here logs parameters: they hold the control, and the payer's name and e-mail.
 */
@Injectable()
export class CallbackIngestService {
  constructor(
    @Inject(CONTROL_KEYS) private readonly keys: ControlKeyStore,
    @Inject(HINT_LIMITER) private readonly limiter: HintLimiter,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(CALLBACK_METRICS) private readonly metrics: CallbackMetrics,
    private readonly publisher: CallbackPublisher,
    private readonly logger: PinoLogger,
  ) {
    this.logger.setContext(CallbackIngestService.name);
  }

  isKnownEndpoint(endpointId: string): boolean {
    return this.keys.keyFor(endpointId) !== undefined;
  }

  /** Counts a request refused before it could be read (limits, media type, unknown endpoint). */
  countRefused(reason: string): void {
    this.metrics.rejected.inc({ reason });
  }

  async ingest(request: IngestRequest): Promise<IngestOutcome> {
    const { endpointId, source } = request;
    const controlKey = this.keys.keyFor(endpointId);
    if (controlKey === undefined) {
      this.countRefused('unknown-endpoint');
      return { kind: 'unknown-endpoint' };
    }
    this.metrics.received.inc({ source });
    const receivedAt = new Date(this.clock.now()).toISOString();
    if (source === 'browser-return') {
      const handBack = handBackCommand({ endpointId, params: request.params, receivedAt });
      if (handBack !== undefined) return this.passOn(handBack, request.traceparent);
    }
    const decision = decide({
      endpointId,
      source,
      params: request.params,
      controlKey,
      receivedAt,
    });

    if (decision.kind === 'reject') {
      this.metrics.rejected.inc({ reason: decision.code });
      this.logger.warn(
        { endpointId, source, reason: decision.code, paymentId: decision.paymentId },
        'notification refused',
      );
      if (decision.hint) await this.hint(decision.hint, request.traceparent);
      return {
        kind: 'rejected',
        code: decision.code,
        message: decision.message,
        ...(decision.paymentId === undefined ? {} : { paymentId: decision.paymentId }),
      };
    }

    const { message } = decision;
    this.metrics.verified.inc({ source });
    const fields = {
      endpointId,
      source,
      paymentId: message.paymentId,
      gatewayOrderId: message.report.gatewayOrderId,
      status: message.report.status,
      notificationId: message.notificationId,
    };
    try {
      await this.publisher.publish(message, request.traceparent);
    } catch (error) {
      this.logger.error(
        { ...fields, error: errorMessage(error) },
        'verified notification not acknowledged by the broker',
      );
      return { kind: 'unavailable', paymentId: message.paymentId };
    }
    this.logger.info(fields, 'verified notification published');
    return {
      kind: 'accepted',
      notificationId: message.notificationId,
      paymentId: message.paymentId,
    };
  }

  /** A 3-D Secure hand-back (CRes / PaRes) passed on as its upload command. */
  private async passOn(command: HandBackCommand, traceparent?: string): Promise<IngestOutcome> {
    const fields = {
      endpointId: command.merchant.endpointId,
      paymentId: command.paymentId,
      commandId: command.commandId,
      type: command.type,
    };
    try {
      await this.publisher.publishCommand(command, traceparent);
    } catch (error) {
      this.logger.error(
        { ...fields, error: errorMessage(error) },
        '3-D Secure hand-back not published',
      );
      return { kind: 'unavailable', paymentId: command.paymentId };
    }
    this.logger.info(fields, '3-D Secure hand-back published as a command');
    return { kind: 'accepted', notificationId: command.commandId, paymentId: command.paymentId };
  }

  /**
   * At most one hint per payment per window. Awaited so that a test (and an operator) can rely on
   * "answered means hinted", but its failure never changes the answer: hints are best effort.
   */
  private async hint(hint: StatusCheckHint, traceparent: string | undefined): Promise<void> {
    const admission = this.limiter.tryAdmit(hint.paymentId);
    if (admission !== 'admitted') {
      this.metrics.hintsSuppressed.inc({ why: admission });
      return;
    }
    try {
      await this.publisher.publish(hint, traceparent);
      this.logger.info(
        { paymentId: hint.paymentId, reason: hint.reason, notificationId: hint.notificationId },
        'status-check hint published',
      );
    } catch (error) {
      this.limiter.release(hint.paymentId);
      this.logger.warn(
        { paymentId: hint.paymentId, reason: hint.reason, error: errorMessage(error) },
        'status-check hint not published',
      );
    }
  }
}
