import { isDatabaseUnavailable } from '@payments/database';
import { Injectable } from '@nestjs/common';
import { CallbackMessage, GatewayResult, ReconcileCommand, TOPICS } from '@payments/contracts';
import {
  type ConsumedMessage,
  type KafkaMessageHandler,
  PoisonMessageError,
} from '@payments/kafka';
import { z } from 'zod';
import { inputMeta } from './input-meta';
import { ReconciliationService } from '../../application/reconciliation/reconciliation.service';
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
  /** A database failing over: wait for it, never dead-letter the message (libs/database). */
  readonly isUnavailable = isDatabaseUnavailable;
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
  /** A database failing over: wait for it, never dead-letter the message (libs/database). */
  readonly isUnavailable = isDatabaseUnavailable;
  constructor(
    private readonly runtime: SagaRuntime,
    private readonly reconciliation: ReconciliationService,
  ) {}

  handle(message: ConsumedMessage<GatewayResult>): Promise<void> {
    return this.handleBatch([message]);
  }

  /**
   * Status answers to reconciliation checks go to the reconciliation service (their request ids
   * belong to no saga); everything else to the saga runtime — and so does an answer of a check
   * that is evidence for a saga (the gateway's final reply about the request it waits for), as
   * the ordinary status reply the service makes of it.
   */
  async handleBatch(messages: readonly ConsumedMessage<GatewayResult>[]): Promise<void> {
    const statusIds = messages
      .filter((m) => m.value.operation === 'status')
      .map((m) => m.value.requestId);
    const checks = await this.reconciliation.owned(statusIds);
    const forChecks = messages.filter((m) => checks.has(m.value.requestId));
    const forSagas = messages.filter((m) => !checks.has(m.value.requestId));
    const evidence =
      forChecks.length > 0 ? await this.reconciliation.record(forChecks.map((m) => m.value)) : [];
    const meta = new Map(forChecks.map((m) => [m.value.requestId, inputMeta(m.headers)]));
    const inputs = [
      ...forSagas.map((m) => ({ result: m.value, meta: inputMeta(m.headers) })),
      ...evidence.map((result) => ({ result, meta: meta.get(result.requestId) ?? {} })),
    ];
    if (inputs.length > 0) {
      await this.runtime.process(
        inputs.map(({ result, meta: m }) => ({ kind: 'gateway-result', result, meta: m })),
      );
    }
  }
}

/** `reconcile` commands: start a reconciliation run (idempotent per run id). */
@Injectable()
export class ReconcileCommandsHandler implements KafkaMessageHandler<ReconcileCommand> {
  readonly topic = TOPICS.reconciliationCommands;
  readonly schema = ReconcileCommand;
  /** A database failing over: wait for it, never dead-letter the message (libs/database). */
  readonly isUnavailable = isDatabaseUnavailable;
  constructor(private readonly reconciliation: ReconciliationService) {}

  async handle(message: ConsumedMessage<ReconcileCommand>): Promise<void> {
    const command = message.value;
    const from = new Date(command.from);
    const to = new Date(command.to);
    if (!(from < to)) {
      throw new PoisonMessageError(
        `reconcile: the window must end after it starts (${command.from} .. ${command.to})`,
      );
    }
    await this.reconciliation.start(
      {
        runId: command.runId,
        trigger: 'on-demand',
        requestedBy: command.requestedBy,
        from,
        to,
        ...(command.endpointId === undefined ? {} : { endpointId: command.endpointId }),
      },
      inputMeta(message.headers),
    );
  }
}

@Injectable()
export class CallbacksHandler implements KafkaMessageHandler<CallbackMessage> {
  readonly topic = TOPICS.gatewayCallbacks;
  readonly schema = CallbackMessage;
  /** A database failing over: wait for it, never dead-letter the message (libs/database). */
  readonly isUnavailable = isDatabaseUnavailable;
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

export const ORCHESTRATOR_HANDLERS = [
  CommandsHandler,
  GatewayResultsHandler,
  CallbacksHandler,
  ReconcileCommandsHandler,
];
