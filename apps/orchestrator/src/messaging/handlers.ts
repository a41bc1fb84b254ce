import { Injectable } from '@nestjs/common';
import { CallbackMessage, GatewayResult, TOPICS } from '@payments/contracts';
import type { ConsumedMessage, KafkaMessageHandler } from '@payments/kafka';
import { z } from 'zod';
import { inputMeta } from '../application/outbox-messages';
import { PaymentSagaService } from '../application/payment-saga.service';

/**
 * Kafka handlers of the `orchestrator` group: they translate a message into a call of the saga
 * service and nothing else (STYLE.md practice 1). libs/kafka owns commit, retry and DLQ.
 */

/** Any JSON value: validation (and the command-rejected answer) belongs to the service. */
const AnyJson = z.unknown();

@Injectable()
export class CommandsHandler implements KafkaMessageHandler<unknown> {
  readonly topic = TOPICS.commands;
  readonly schema = AnyJson;
  constructor(private readonly saga: PaymentSagaService) {}

  handle(message: ConsumedMessage<unknown>): Promise<void> {
    return this.saga.handleCommand(message.value, inputMeta(message.headers));
  }
}

@Injectable()
export class GatewayResultsHandler implements KafkaMessageHandler<GatewayResult> {
  readonly topic = TOPICS.gatewayResults;
  readonly schema = GatewayResult;
  constructor(private readonly saga: PaymentSagaService) {}

  handle(message: ConsumedMessage<GatewayResult>): Promise<void> {
    return this.saga.handleGatewayResult(message.value, inputMeta(message.headers));
  }
}

@Injectable()
export class CallbacksHandler implements KafkaMessageHandler<CallbackMessage> {
  readonly topic = TOPICS.gatewayCallbacks;
  readonly schema = CallbackMessage;
  constructor(private readonly saga: PaymentSagaService) {}

  handle(message: ConsumedMessage<CallbackMessage>): Promise<void> {
    return this.saga.handleCallback(message.value, inputMeta(message.headers));
  }
}

export const ORCHESTRATOR_HANDLERS = [CommandsHandler, GatewayResultsHandler, CallbacksHandler];
