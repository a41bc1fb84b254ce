import { Inject, Injectable, Logger } from '@nestjs/common';
import type { CallbackMessage, GatewayResult } from '@payments/contracts';
import { PoisonMessageError } from '@payments/kafka';
import type { EntityManager } from 'typeorm';
import type { InputMeta } from './outbox/outbox-rows';
import { OutboxWriter } from './outbox/outbox.writer';
import { JournalWriter } from './journal/journal.writer';
import { Database } from '../persistence/database';
import { SagaRepository } from '../persistence/saga.repository';
import { TimerRepository, type TimerRow } from '../persistence/timer.repository';
import { Clock, IdGenerator } from './clock';
import type { CommandCatalogue } from './flow';
import { countCommitted, observeTimeToTruth, outcomeMetrics } from './outcome-metrics';
import { memoisedCatalogue, timerRetryDelayMs } from './runtime-rules';
import { UnitOfWork } from './unit-of-work';
import type { AnyFlow, RuntimeInput, RuntimeOptions } from './runtime-input';

export { type AnyFlow, INBOX, type RuntimeInput, type RuntimeOptions } from './runtime-input';

/**
 * The flows the runtime hosts. The first one also writes the rejection of an invalid command of
 * a type no flow owns; a valid command of such a type is refused, never decided by another flow.
 */
export const FLOWS = Symbol('FLOWS');
/** How raw commands are validated and routed. */
export const COMMAND_CATALOGUE = Symbol('COMMAND_CATALOGUE');
/** Runtime settings. */
export const RUNTIME_OPTIONS = Symbol('RUNTIME_OPTIONS');

/**
 * The saga runtime (DESIGN.md "Sagas"): routes every input — command, gateway result, callback,
 * status-check hint, timer — to (flow, saga id) and carries it through one unit of work:
 * inbox or idempotency check, saga row locked FOR UPDATE, the flow's pure decider, a pure write
 * plan (state, history, outbox rows, timers, child sagas), applied in one transaction. A list of
 * inputs is one transaction too, in order (so one saga's inputs keep theirs). Nothing is
 * published from here: the outbox relay publishes what committed.
 */
@Injectable()
export class SagaRuntime {
  private readonly logger = new Logger(SagaRuntime.name);
  private readonly metrics = outcomeMetrics();
  private readonly byName = new Map<string, AnyFlow>();
  private readonly byCommandType = new Map<string, AnyFlow>();
  /** Writes the rejection of an invalid command no flow owns (the first flow). */
  private readonly rejectingFlow: AnyFlow;
  /** Stateless: the journal's lines join each decision's statement. */
  private readonly journal = new JournalWriter();

  constructor(
    private readonly db: Database,
    private readonly sagas: SagaRepository,
    private readonly outbox: OutboxWriter,
    private readonly timers: TimerRepository,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    @Inject(FLOWS) flows: readonly AnyFlow[],
    @Inject(COMMAND_CATALOGUE) private readonly catalogue: CommandCatalogue,
    @Inject(RUNTIME_OPTIONS) private readonly options: RuntimeOptions,
  ) {
    const [first] = flows;
    if (first === undefined) throw new Error('the saga runtime needs at least one flow');
    this.rejectingFlow = first;
    for (const flow of flows) {
      if (this.byName.has(flow.name)) throw new Error(`flow ${flow.name} registered twice`);
      this.byName.set(flow.name, flow);
      for (const type of flow.commandTypes) {
        if (this.byCommandType.has(type)) throw new Error(`command type ${type} has two flows`);
        this.byCommandType.set(type, flow);
      }
    }
  }

  /** A message from the commands topic (any JSON value). */
  handleCommand(raw: unknown, meta: InputMeta): Promise<void> {
    return this.process([{ kind: 'command', raw, meta }]);
  }

  /** A GatewayResult (send result or status reply), deduplicated by requestId + attempt. */
  handleGatewayResult(result: GatewayResult, meta: InputMeta): Promise<void> {
    return this.process([{ kind: 'gateway-result', result, meta }]);
  }

  /** A verified callback or a status-check hint, deduplicated by notificationId. */
  handleCallback(message: CallbackMessage, meta: InputMeta): Promise<void> {
    return this.process([{ kind: 'callback', message, meta }]);
  }

  /**
   * Inputs in one transaction, in order. Throws PoisonMessageError (before anything is written)
   * when a command carries no command id and saga id to address a rejection to.
   */
  async process(inputs: readonly RuntimeInput[]): Promise<void> {
    // Each command is parsed (validated, fingerprinted) once for the whole unit of work.
    const catalogue = memoisedCatalogue(this.catalogue);
    for (const input of inputs) {
      if (input.kind === 'command') addressable(catalogue, input.raw, (type) => this.owns(type));
    }
    await this.committedUnitOfWork(catalogue, async (work) => {
      // One statement opens the unit of work (the prelude), for a single input too: its sagas
      // locked up front in id order (two batches sharing sagas queue instead of deadlocking), its
      // inbox rows and its commands' records written.
      await work.prelude(sagaIdsOf(catalogue, inputs), inputs);
      for (const input of inputs) await work.run(input);
    });
  }

  /**
   * Claims and fires one due timer (FOR UPDATE SKIP LOCKED: concurrent workers never fire the same
   * one). `idle` when none is due; `taken` when another worker fired or a handler rescheduled it
   * while this one waited for the saga. A failed firing is rolled back, counted and postponed.
   */
  async fireNextDueTimer(): Promise<'fired' | 'taken' | 'idle'> {
    let claimed: TimerRow | undefined;
    try {
      return await this.committedUnitOfWork(this.catalogue, async (work, tx) => {
        const next = await this.timers.nextDueTimer(tx, work.now);
        if (!next) return 'idle';
        // Lock order as in every handler, saga row first, then its timer: no deadlock.
        const row = await work.lock(next.sagaId);
        claimed = await this.timers.claimTimer(tx, next, work.now);
        // Fired or rescheduled by someone else while we waited for the saga: go on.
        if (!claimed) return 'taken';
        if (row) await work.fire(row, claimed);
        return 'fired';
      });
    } catch (error) {
      const failed: TimerRow | undefined = claimed;
      if (!failed) throw error;
      const retryAt = new Date(this.clock.now().getTime() + timerRetryDelayMs(failed.attempts));
      this.logger.error(
        `timer ${failed.kind} of ${failed.flow} ${failed.sagaId} failed (attempt ${failed.attempts + 1}); retry at ${retryAt.toISOString()}: ${String(error)}`,
      );
      await this.db.transaction((tx) => this.timers.postponeTimer(tx, failed, retryAt));
      return 'fired';
    }
  }

  /**
   * One unit of work in one transaction. The events it wrote are counted (outcome metrics), and
   * timed from the gateway answers they report, once the commit succeeded: a unit that rolls
   * back counts nothing.
   */
  private async committedUnitOfWork<T>(
    catalogue: CommandCatalogue,
    body: (work: UnitOfWork, tx: EntityManager) => Promise<T>,
  ): Promise<T> {
    const [result, committed] = await this.db.unitOfWork(async (tx) => {
      const work = this.unitOfWork(tx, catalogue);
      const result = await body(work, tx);
      await work.finish();
      return [result, work.written] as const;
    });
    countCommitted(this.metrics, committed, (flow) => this.byName.get(flow)?.moneyEvents ?? []);
    observeTimeToTruth(this.metrics, committed, this.clock.now());
    return result;
  }

  private unitOfWork(tx: EntityManager, catalogue: CommandCatalogue): UnitOfWork {
    return new UnitOfWork(
      tx,
      this.clock.now(),
      {
        sagas: this.sagas,
        outbox: this.outbox,
        journal: this.journal,
        timers: this.timers,
        ids: this.ids,
        catalogue,
        options: this.options,
        logger: this.logger,
      },
      (name) => this.byName.get(name),
      (type, valid) => this.flowForCommand(type, valid),
    );
  }

  private owns(type: string): boolean {
    return this.byCommandType.has(type);
  }

  /**
   * The flow that owns a command's type. An invalid command of a type no flow owns (an unknown
   * type, no type) is rejected by the first flow; a valid one is refused as an error: it is
   * never decided by a flow that does not own it.
   */
  private flowForCommand(type: string | undefined, valid: boolean): AnyFlow {
    const owner = type === undefined ? undefined : this.byCommandType.get(type);
    if (owner !== undefined) return owner;
    if (!valid) return this.rejectingFlow;
    throw new UnownedCommandError(type ?? '');
  }
}

/** A valid command of a type no hosted flow owns: dead-lettered, never given to another flow. */
export class UnownedCommandError extends PoisonMessageError {
  constructor(readonly commandType: string) {
    super(`command type ${commandType} has no flow in this orchestrator (FLOW_MODULES)`);
    this.name = 'UnownedCommandError';
  }
}

/** The sagas the inputs address (those that name one), sorted. */
function sagaIdsOf(catalogue: CommandCatalogue, inputs: readonly RuntimeInput[]): string[] {
  const ids = new Set<string>();
  for (const input of inputs) {
    switch (input.kind) {
      case 'command': {
        const parsed = catalogue.parse(input.raw);
        const id = parsed.ok ? parsed.command.sagaId : parsed.ids.sagaId;
        if (id !== undefined) ids.add(id);
        break;
      }
      case 'gateway-result':
        ids.add(input.result.paymentId);
        break;
      case 'callback':
        ids.add(input.message.paymentId);
        break;
      default: {
        const never: never = input;
        throw new Error(`unhandled input ${JSON.stringify(never)}`);
      }
    }
  }
  return [...ids].sort();
}

function addressable(
  catalogue: CommandCatalogue,
  raw: unknown,
  owned: (type: string) => boolean,
): void {
  const parsed = catalogue.parse(raw);
  if (parsed.ok && !owned(parsed.command.type)) throw new UnownedCommandError(parsed.command.type);
  if (parsed.ok) return;
  if (parsed.ids.commandId === undefined || parsed.ids.sagaId === undefined) {
    throw new PoisonMessageError(
      `command without commandId/paymentId (${parsed.reason}: ${parsed.message})`,
    );
  }
}
