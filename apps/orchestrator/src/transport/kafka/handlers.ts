import { Injectable } from '@nestjs/common';
import { CallbackMessage, GatewayResult, TOPICS } from '@payments/contracts';
import type { ConsumedMessage, KafkaMessageHandler } from '@payments/kafka';
import { z } from 'zod';
import { inputMeta } from '../../outbox/outbox-rows';
import { SagaRuntime } from '../../runtime/saga-runtime';

/**
 * Kafka handlers of the `orchestrator` group: they translate a message into a call of the saga
 * service and nothing else (STYLE.md practice 1). libs/kafka owns commit, retry and DLQ. A
 * consumed batch is one unit of work (`SagaRuntime.process`: one transaction, in order); when it
 * fails, libs/kafka hands its messages to `handle` one by one.
 */

/** Any JSON value: validation (and the command-rejected answer) belongs to the service. */
const AnyJson = z.unknown();

@Injectable()
export class CommandsHandler implements KafkaMessageHandler<unknown> {
  readonly topic = TOPICS.commands;
  readonly schema = AnyJson;
  constructor(private readonly runtime: SagaRuntime) {}

  handle(message: ConsumedMessage<unknown>): Promise<void> {
    return this.runtime.handleCommand(message.value, inputMeta(message.headers));
  }

  handleBatch(messages: readonly ConsumedMessage<unknown>[]): Promise<void> {
    return this.runtime.process(
      messages.map((m) => ({ kind: 'command', raw: m.value, meta: inputMeta(m.headers) })),
    );
  }
}

@Injectable()
export class GatewayResultsHandler implements KafkaMessageHandler<GatewayResult> {
  readonly topic = TOPICS.gatewayResults;
  readonly schema = GatewayResult;
  constructor(private readonly runtime: SagaRuntime) {}

  handle(message: ConsumedMessage<GatewayResult>): Promise<void> {
    return this.runtime.handleGatewayResult(message.value, inputMeta(message.headers));
  }

  handleBatch(messages: readonly ConsumedMessage<GatewayResult>[]): Promise<void> {
    return this.runtime.process(
      messages.map((m) => ({
        kind: 'gateway-result',
        result: m.value,
        meta: inputMeta(m.headers),
      })),
    );
  }
}

@Injectable()
export class CallbacksHandler implements KafkaMessageHandler<CallbackMessage> {
  readonly topic = TOPICS.gatewayCallbacks;
  readonly schema = CallbackMessage;
  constructor(private readonly runtime: SagaRuntime) {}

  handle(message: ConsumedMessage<CallbackMessage>): Promise<void> {
    return this.runtime.handleCallback(message.value, inputMeta(message.headers));
  }

  handleBatch(messages: readonly ConsumedMessage<CallbackMessage>[]): Promise<void> {
    return this.runtime.process(
      messages.map((m) => ({ kind: 'callback', message: m.value, meta: inputMeta(m.headers) })),
    );
  }
}

export const ORCHESTRATOR_HANDLERS = [CommandsHandler, GatewayResultsHandler, CallbacksHandler];
