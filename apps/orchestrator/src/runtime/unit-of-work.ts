/**
 * One unit of work of the saga runtime: the inputs of one transaction, the sagas it locked (with
 * their state as it moves) and the writes so far. `SagaRuntime` (saga-runtime.ts) opens the
 * transaction and hands each input here.
 */
import type { Logger } from '@nestjs/common';
import type { CallbackMessage, GatewayResult, RejectionCode } from '@payments/contracts';
import { PoisonMessageError } from '@payments/kafka';
import { inSpan } from '@payments/observability';
import type { EntityManager } from 'typeorm';
import { idempotencyVerdict } from '../domain';
import { eventRow as eventRowFor, gatewayRequestRow, type InputMeta } from './outbox/outbox-rows';
import { OutboxWriter } from './outbox/outbox.writer';
import type { JournalWriter, PendingMoneyEvent } from './journal/journal.writer';
import {
  type HistoryRow,
  inboxKey,
  type RecordedCommand,
  SagaRepository,
  type SagaRow,
} from '../persistence/saga.repository';
import type { SagaWrite } from '../persistence/saga.repository';
import { TimerRepository, type TimerRow } from '../persistence/timer.repository';
import type { IdGenerator } from './clock';
import type {
  CommandCatalogue,
  CommandOrigin,
  Decision,
  RuntimeEffect,
  SagaEvent,
  SagaInput,
} from './flow';
import { type GatewayAnswer, gatewayAnswerOf, type OutcomeEvent } from './outcome-metrics';
import { commandRecords, hintAllowed, isCanonicalUuid } from './runtime-rules';
import { planWrites, RESEND_TIMER, type ResendPayload, type WritePlan } from './write-plan';
import {
  type AnyFlow,
  callbackMessageId,
  INBOX,
  inboxRows,
  resultMessageId,
  type RuntimeInput,
  type RuntimeOptions,
} from './runtime-input';

/** An event written, with the gateway answer it reports (when its input was one). */
function outcome(flow: string, event: SagaEvent, answer: GatewayAnswer | undefined): OutcomeEvent {
  return answer === undefined ? { flow, event } : { flow, event, answer };
}

export interface UnitOfWorkDeps {
  readonly sagas: SagaRepository;
  readonly outbox: OutboxWriter;
  /** The journal's lines of the decision's money events, in its statement. */
  readonly journal: JournalWriter;
  readonly timers: TimerRepository;
  readonly ids: IdGenerator;
  readonly catalogue: CommandCatalogue;
  readonly options: RuntimeOptions;
  readonly logger: Logger;
}

/** One transaction: the sagas it locked (with their state as it moves) and the writes so far. */
export class UnitOfWork {
  private readonly locked = new Map<string, SagaRow>();
  /** Sagas the prelude found without a row: `lock` need not ask again (a row created meanwhile by
   * another transaction makes this one's INSERT fail with ConcurrentUpdateError). */
  private readonly absent = new Set<string>();
  /** Inbox rows the prelude wrote (key → not yet taken by its input). */
  private readonly inboxFresh = new Map<string, boolean>();
  /** Commands `prelude` recorded (id → undefined) or found, for the first input carrying each. */
  private readonly commandsRecorded = new Map<string, RecordedCommand | undefined>();
  /** The events written so far (new ones only: a re-emitted duplicate is not an outcome). */
  readonly written: OutcomeEvent[] = [];
  /** Money events written so far, numbered per merchant by `finish` (control totals). */
  private readonly moneyEvents: PendingMoneyEvent[] = [];
  /** Sagas decided on in this unit of work that have no row (yet): id → endpoint id. */
  private readonly notSaved = new Map<string, string>();

  constructor(
    private readonly tx: EntityManager,
    readonly now: Date,
    private readonly deps: UnitOfWorkDeps,
    private readonly flowNamed: (name: string) => AnyFlow | undefined,
    /** The flow owning a command type (`valid`: the command parsed); throws for a valid one none owns. */
    private readonly flowForCommand: (type: string | undefined, valid: boolean) => AnyFlow,
  ) {}

  async run(input: RuntimeInput): Promise<void> {
    switch (input.kind) {
      case 'command':
        return this.command(input.raw, input.meta, input.origin ?? 'topic');
      case 'gateway-result':
        return this.gatewayResult(input.result, input.meta);
      case 'callback':
        return this.callback(input.message, input.meta);
      default: {
        const never: never = input;
        throw new Error(`unhandled input ${JSON.stringify(never)}`);
      }
    }
  }

  /**
   * The unit of work's last statement before its commit: its money events numbered per merchant
   * (`merchantSeq`, control totals). Last, so each merchant's counter row is held only until the
   * commit, which follows at once.
   */
  async finish(): Promise<void> {
    await this.deps.journal.numberMoneyEvents(this.tx, this.moneyEvents);
  }

  /** Locks the sagas among `ids` (sorted), records the inputs' inbox rows and commands, in one
   * statement; a flow's own commands and ids not in canonical form go the separate way. */
  async prelude(ids: readonly string[], inputs: readonly RuntimeInput[]): Promise<void> {
    const sagaIds = ids.filter((id) => !this.locked.has(id) && isCanonicalUuid(id));
    const inbox = inboxRows(inputs);
    const commands = commandRecords(
      inputs.flatMap((input) =>
        input.kind === 'command' && input.origin !== 'saga' ? [input.raw] : [],
      ),
      this.deps.catalogue,
    );
    const opened = await this.deps.sagas.prelude(this.tx, { sagaIds, inbox, commands }, this.now);
    for (const row of opened.sagas) this.locked.set(row.id, row);
    for (const id of sagaIds) if (!this.locked.has(id)) this.absent.add(id);
    for (const m of inbox) {
      const key = inboxKey(m.consumer, m.messageId);
      if (!this.inboxFresh.has(key)) this.inboxFresh.set(key, opened.freshInbox.has(key));
    }
    for (const [id, record] of opened.commands) this.commandsRecorded.set(id, record);
  }

  /** Whether the message is new to its consumer: taken from the prelude, or recorded now. */
  private async inbox(consumer: string, messageId: string): Promise<boolean> {
    const key = inboxKey(consumer, messageId);
    const recorded = this.inboxFresh.get(key);
    if (recorded === undefined) return this.deps.sagas.recordInbox(this.tx, consumer, messageId);
    this.inboxFresh.set(key, false);
    return recorded;
  }

  /** The prelude's verdict on a command (for the first input with its id), else its record now. */
  private async recorded(origin: CommandOrigin, id: string, fingerprint: string, sagaId: string) {
    const record = this.commandsRecorded.get(id);
    if (origin === 'topic' && this.commandsRecorded.delete(id)) return record;
    return this.deps.sagas.recordCommandOnce(this.tx, id, fingerprint, sagaId, this.now);
  }

  /** Locks the saga once per transaction; later inputs see the state the earlier ones left. */
  async lock(sagaId: string): Promise<SagaRow | undefined> {
    const cached = this.locked.get(sagaId);
    if (cached) return cached;
    if (this.absent.has(sagaId)) return undefined;
    const row = await this.deps.sagas.lockSaga(this.tx, sagaId);
    if (row) this.locked.set(sagaId, row);
    return row;
  }

  /** A due timer, in a `timer <kind>` span continuing the trace of the input that set it. */
  fire(row: SagaRow, timer: TimerRow): Promise<void> {
    const options = {
      ...(timer.traceparent === undefined ? {} : { parent: timer.traceparent }),
      attributes: { 'payments.flow': timer.flow, 'payments.timer.kind': timer.kind },
    };
    return inSpan(`timer ${timer.kind}`, options, async (span) => {
      const traceparent = span.traceparent ?? timer.traceparent;
      const meta: InputMeta = traceparent === undefined ? {} : { traceparent };
      if (timer.kind === RESEND_TIMER) {
        const flow = this.flowOf(row);
        const rows = await this.resendRows(row, flow, timer.payload as ResendPayload, meta);
        await this.deps.outbox.enqueue(this.tx, rows);
        return;
      }
      await this.decideAndApply(
        row,
        { kind: 'timer', timer: { kind: timer.kind, payload: timer.payload } },
        meta,
      );
    });
  }

  /** `parent`: the flow whose saga started this command (a child, origin `saga`). */
  private async command(
    raw: unknown,
    meta: InputMeta,
    origin: CommandOrigin = 'topic',
    parent?: AnyFlow,
  ): Promise<void> {
    const parsed = this.deps.catalogue.parse(raw, origin);
    const ids = parsed.ok
      ? {
          commandId: parsed.command.commandId,
          sagaId: parsed.command.sagaId,
          type: parsed.command.type,
          endpointId: parsed.command.endpointId,
        }
      : parsed.ids;
    const { commandId, sagaId } = ids;
    // Checked before the transaction (SagaRuntime.process); a child command is built by a flow.
    if (commandId === undefined || sagaId === undefined) {
      throw new PoisonMessageError('command without commandId/paymentId');
    }
    const existing = await this.lock(sagaId);
    const flow =
      (origin === 'saga' && existing && this.answeringFlow(existing, ids.type)) ||
      this.flowForCommand(ids.type, parsed.ok);
    // A saga that does not exist is not created for a command: only a decision that starts it
    // writes its row. Until then the command is decided on the initial state.
    const row = existing ?? this.unsaved(sagaId, flow.name, ids.endpointId, flow);
    const reject = async (reason: RejectionCode, message: string, own: boolean) => {
      await this.reject(row, meta, { commandId, commandType: ids.type, reason, message }, own);
      // The saga that started it may be waiting for an answer no saga will ever give.
      if (parent?.childRefusalEffects === undefined || existing !== undefined) return;
      if (typeof raw !== 'object' || raw === null) return;
      const effects = parent.childRefusalEffects(
        raw,
        { code: reason, message },
        this.now.toISOString(),
      );
      for (const effect of effects) {
        if (effect.type !== 'start-saga')
          throw new Error(`a child's refusal may only start sagas, not ${effect.type}`);
        await this.command(effect.command, meta, 'saga', parent);
      }
    };
    // Recorded now when new (one statement: the record, or the one kept before), unless the
    // prelude did; a second input with the same id reads what the first left.
    const recorded = await this.recorded(origin, commandId, parsed.fingerprint, sagaId);
    const verdict = idempotencyVerdict(recorded?.fingerprint, parsed.fingerprint);
    switch (verdict) {
      case 'duplicate':
        return this.reemit(commandId, recorded?.rejection ?? null, sagaId, meta);
      case 'conflict':
        return reject(
          'DUPLICATE_COMMAND_CONFLICT',
          `command ${commandId} was already received with a different body`,
          false,
        );
      case 'new':
        break;
      default: {
        const never: never = verdict;
        throw new Error(`unhandled verdict ${String(never)}`);
      }
    }
    if (!parsed.ok) return reject(parsed.reason, parsed.message, true);
    if (row.flow !== flow.name) {
      return reject(
        'INVALID_STATE',
        `${sagaId} is a ${row.flow} saga, not a ${flow.name} one`,
        true,
      );
    }
    await this.decideAndApply(row, { kind: 'command', command: parsed.command }, meta, commandId);
  }

  /** The saga's own flow when it takes `type` as an answer from another saga (`answerTypes`). */
  private answeringFlow(row: SagaRow, type: string | undefined): AnyFlow | undefined {
    const flow = this.flowNamed(row.flow);
    return type !== undefined && flow?.answerTypes?.includes(type) ? flow : undefined;
  }

  /** A saga that has no row yet, decided on its flow's initial state. */
  private unsaved(id: string, flow: string, endpointId: string, f: AnyFlow): SagaRow {
    this.notSaved.set(id, endpointId);
    return { id, flow, state: f.initialState, version: 0, lastHintAt: null };
  }

  private async gatewayResult(result: GatewayResult, meta: InputMeta): Promise<void> {
    if (!(await this.inbox(INBOX.gatewayResults, resultMessageId(result)))) return;
    const row = await this.lock(result.paymentId);
    if (!row) {
      this.deps.logger.warn(`gateway result for unknown saga ${result.paymentId} ignored`);
      return;
    }
    await this.decideAndApply(row, { kind: 'gateway-result', result }, meta);
  }

  private async callback(message: CallbackMessage, meta: InputMeta): Promise<void> {
    const row = await this.lock(message.paymentId);
    if (!row) {
      this.deps.logger.warn(`${message.kind} for unknown saga ${message.paymentId} ignored`);
      return;
    }
    const version = this.current(row).version;
    if (!(await this.inbox(INBOX.callbacks, callbackMessageId(message, version)))) return;
    switch (message.kind) {
      case 'callback':
        await this.decideAndApply(row, { kind: 'callback', callback: message }, meta);
        return;
      case 'status-check-hint': {
        // Unverified: at most one status refresh per saga per interval.
        if (!hintAllowed(row.lastHintAt, this.now, this.deps.options.hintIntervalMs)) return;
        const decision = await this.decideAndApply(
          row,
          { kind: 'status-check-hint', hint: message },
          meta,
        );
        if (decision.effects.length > 0) {
          await this.deps.sagas.markHint(this.tx, row.id, this.now);
          this.locked.set(row.id, { ...this.current(row), lastHintAt: this.now });
        }
        return;
      }
      default: {
        const never: never = message;
        throw new Error(`unhandled callback message ${JSON.stringify(never)}`);
      }
    }
  }

  private flowOf(row: SagaRow): AnyFlow {
    const flow = this.flowNamed(row.flow);
    if (!flow) throw new Error(`saga ${row.id} belongs to flow ${row.flow}, which is not hosted`);
    return flow;
  }

  private current(row: SagaRow): SagaRow {
    return this.locked.get(row.id) ?? row;
  }

  private async decideAndApply(
    given: SagaRow,
    input: SagaInput,
    meta: InputMeta,
    ownCommandId?: string,
  ): Promise<Decision<SagaEvent, RuntimeEffect>> {
    const row = this.current(given);
    const flow = this.flowOf(row);
    const decision = flow.decide(input, row.state, {
      now: this.now.toISOString(),
      ids: { next: () => this.deps.ids.next() },
    });
    if (decision.outcome === 'ignored') {
      this.deps.logger.debug(`${row.flow} ${row.id}: ${input.kind} ignored (${decision.reason})`);
    }
    const effects =
      decision.outcome === 'rejected' && input.kind === 'command'
        ? (flow.refusalEffects?.(input.command, decision.rejection, this.now.toISOString()) ?? [])
        : decision.effects;
    // The gateway answer this input carries (when it is one): its events are timed from it.
    const answer = gatewayAnswerOf(input, row.state);
    await this.apply(row, flow, decision.events, effects, meta, ownCommandId, answer);
    return decision;
  }

  /** Plans the writes of a decision (pure) and carries them out in this transaction. */
  private async apply(
    row: SagaRow,
    flow: AnyFlow,
    events: readonly SagaEvent[],
    effects: readonly RuntimeEffect[],
    meta: InputMeta,
    ownCommandId?: string,
    answer?: GatewayAnswer,
  ): Promise<void> {
    const endpointId = this.notSaved.get(row.id);
    const plan = planWrites({
      sagaId: row.id,
      flow,
      state: row.state,
      version: row.version,
      events,
      effects,
      meta,
      now: this.now,
      ids: this.deps.ids,
    });
    if (endpointId !== undefined) {
      if (plan.next === undefined || plan.next.projection.status === 'initial') {
        return this.publishWithoutSaga(row, plan, meta, ownCommandId);
      }
      // The decision starts the saga: its row is created with the new state (written by `write`;
      // created by another transaction meanwhile: ConcurrentUpdateError, the transaction rolls
      // back and the redelivery decides on its row).
      this.notSaved.delete(row.id);
      const insert = { op: 'insert', endpointId, next: plan.next } as const;
      return this.write(row, flow, plan, meta, insert, answer);
    }
    await this.write(
      row,
      flow,
      plan,
      meta,
      plan.next === undefined
        ? { op: 'none' }
        : { op: 'update', expectedVersion: plan.expectedVersion, next: plan.next },
      answer,
    );
  }

  /**
   * A decision about a saga that does not exist and that does not start it (a rejection): nothing
   * is written for the saga; its events are published with version 0 (they belong to no saga's
   * history) and the command's own rejection is kept on its row for re-emitting.
   */
  private async publishWithoutSaga(
    row: SagaRow,
    plan: WritePlan,
    meta: InputMeta,
    ownCommandId: string | undefined,
  ): Promise<void> {
    // Only other sagas may be started (a refused command's `refusalEffects`): nothing of its own.
    const effects = plan.gatewayRequests.length + plan.timers.length + plan.resends.length;
    if (effects > 0) throw new Error(`a decision that starts no saga has effects (saga ${row.id})`);
    const history = plan.history.map((h) => ({ ...h, event: { ...h.event, version: 0 } }));
    await this.deps.outbox.enqueue(
      this.tx,
      history.map((h) => eventRowFor(row.id, h.event, { rowId: h.eventId, ceId: h.eventId }, meta)),
    );
    this.written.push(...history.map((h) => ({ flow: row.flow, event: h.event })));
    const [own] = history;
    if (ownCommandId !== undefined && own !== undefined && history.length === 1) {
      await this.deps.sagas.recordRejection(this.tx, ownCommandId, own);
    }
    for (const child of plan.children) await this.command(child, meta, 'saga', this.flowOf(row));
  }

  /**
   * Carries out a plan: the saga's row, history, gateway requests, timers, outbox rows and, once
   * settled, the purge of sealed cards in one statement (resends read their original request
   * first), then child sagas.
   */
  private async write(
    row: SagaRow,
    flow: AnyFlow,
    plan: WritePlan,
    meta: InputMeta,
    saga: SagaWrite,
    answer?: GatewayAnswer,
  ): Promise<void> {
    const { sagas, timers, outbox } = this.deps;
    // Resends are judged on the state the decision leaves (`resendWanted`).
    const after = plan.next
      ? { ...row, state: plan.next.state, version: plan.next.version }
      : this.current(row);
    const rows = [...plan.outbox];
    for (const resend of plan.resends) {
      rows.push(...(await this.resendRows(after, flow, resend, meta, plan)));
    }
    // Settled: the purge of sealed cards joins the statement unless the decision stores requests
    // of its own (a statement's UPDATE does not see the rows its INSERT adds).
    const purgeWithin = plan.purgeSealedCards && plan.gatewayRequests.length === 0;
    const nothing =
      saga.op === 'none' &&
      plan.gatewayRequests.length === 0 &&
      plan.timers.length === 0 &&
      rows.length === 0 &&
      !purgeWithin;
    if (!nothing) {
      const journal = plan.next
        ? await this.deps.journal.entries(this.tx, {
            sagaId: row.id,
            flow: plan.flow,
            history: plan.history,
            newSaga: saga.op === 'insert',
            moneyEvents: flow.moneyEvents ?? [],
            ...(saga.op === 'insert' ? { endpointId: saga.endpointId } : {}),
          })
        : { rows: [], money: [] };
      this.moneyEvents.push(...journal.money);
      await sagas.writeDecision(
        this.tx,
        {
          sagaId: row.id,
          flow: plan.flow,
          saga,
          history: plan.next ? plan.history : [],
          gatewayRequests: plan.gatewayRequests,
        },
        [
          timers.changesPart(plan.flow, row.id, plan.timers, meta.traceparent),
          outbox.rowsPart(rows),
          this.deps.journal.linesPart(journal.rows, this.now),
          ...(purgeWithin ? [sagas.purgePart(row.id, this.now), outbox.purgePart(row.id)] : []),
        ],
        this.now,
      );
    }
    if (plan.next) {
      this.written.push(...plan.history.map((h) => outcome(plan.flow, h.event, answer)));
      this.locked.set(row.id, after);
    }
    if (plan.purgeSealedCards && !purgeWithin) {
      await sagas.purgeSealedCards(this.tx, row.id, this.now, [outbox.purgePart(row.id)]);
    }
    // A child saga starts in the same transaction, through the same command path.
    for (const child of plan.children) await this.command(child, meta, 'saga', flow);
  }

  /**
   * A resend came due: the ORIGINAL request (sealed card included), attempt bumped. `plan`: the
   * decision being written, whose own requests are not stored yet.
   */
  private async resendRows(
    row: SagaRow,
    flow: AnyFlow,
    payload: ResendPayload,
    meta: InputMeta,
    plan?: WritePlan,
  ) {
    if (!flow.resendWanted(row.state, payload.requestId)) return [];
    const original =
      plan?.gatewayRequests.find((r) => r.requestId === payload.requestId) ??
      (await this.deps.sagas.findGatewayRequest(this.tx, payload.requestId));
    if (!original) {
      this.deps.logger.error(`resend of unknown gateway request ${payload.requestId} skipped`);
      return [];
    }
    return [
      gatewayRequestRow(
        {
          ...original,
          attempt: payload.attempt ?? original.attempt,
          ...(payload.afterNoTrace ? { afterNoTrace: true as const } : {}),
        },
        this.deps.ids.next(),
        this.now.toISOString(),
        meta,
      ),
    ];
  }

  /**
   * Same command id and body again: publish the events it caused again, with their ce_ids (or
   * its rejection, when it named a saga that does not exist).
   */
  private async reemit(
    commandId: string,
    rejection: HistoryRow | null,
    sagaId: string,
    meta: InputMeta,
  ): Promise<void> {
    const history = await this.deps.sagas.eventsOfCommand(this.tx, commandId);
    const rows = history.map((h) =>
      eventRowFor(h.sagaId, h.event, { rowId: this.deps.ids.next(), ceId: h.eventId }, meta),
    );
    if (rows.length === 0 && rejection !== null) {
      rows.push(
        eventRowFor(
          sagaId,
          rejection.event,
          { rowId: this.deps.ids.next(), ceId: rejection.eventId },
          meta,
        ),
      );
    }
    await this.deps.outbox.enqueue(this.tx, rows);
  }

  private async reject(
    given: SagaRow,
    meta: InputMeta,
    rejection: {
      commandId: string;
      commandType: string | undefined;
      reason: RejectionCode;
      message: string;
    },
    own: boolean,
  ): Promise<void> {
    const row = this.current(given);
    const flow = this.flowOf(row);
    const event = flow.rejection({
      ...rejection,
      sagaId: row.id,
      version: row.version + 1,
      now: this.now.toISOString(),
    });
    await this.apply(row, flow, [event], [], meta, own ? rejection.commandId : undefined);
  }
}
