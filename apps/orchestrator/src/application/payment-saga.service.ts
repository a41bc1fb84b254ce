import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  type CallbackMessage,
  type GatewayResult,
  type PaymentEvent,
  parseCommand,
  type RejectionCode,
} from '@payments/contracts';
import { PoisonMessageError } from '@payments/kafka';
import {
  commandFingerprint,
  decide,
  type Decision,
  type DecisionContext,
  type Effect,
  fold,
  idempotencyVerdict,
  isSettled,
  type PaymentInput,
  type PaymentPolicy,
  type PaymentState,
  type Timer,
} from '../domain';
import { ORCHESTRATOR_CONFIG, type OrchestratorConfig } from '../config';
import type { EntityManager } from 'typeorm';
import { Database } from '../persistence/database';
import { OutboxRepository } from '../persistence/outbox.repository';
import {
  type HistoryRow,
  PaymentRepository,
  type PaymentRow,
} from '../persistence/payment.repository';
import { TimerRepository, type TimerRow } from '../persistence/timer.repository';
import { Clock, IdGenerator } from './clock';
import {
  eventRow,
  gatewayRequestRow,
  hintAllowed,
  type InputMeta,
  invalidCommandFingerprint,
  type OutboxRow,
  readEndpointId,
  rejectionEvent,
  resendStillWanted,
  timerRetryDelayMs,
} from './outbox-messages';
import { PAYMENT_POLICY } from './policy';

/** Inbox consumer names (one per consumed stream). */
export const INBOX = {
  gatewayResults: 'orchestrator:gateway-results',
  callbacks: 'orchestrator:gateway-callbacks',
} as const;

interface ResendPayload {
  requestId: string;
  attempt: number;
}

/**
 * The application service of the payment saga. Each input is one PostgreSQL transaction: inbox
 * or idempotency check, payment row locked FOR UPDATE, the pure decider, history appended, state
 * saved with a version check, outbox rows (events and gateway requests), timer rows, NOTIFY to
 * the relay. Nothing is published from here: the relay publishes what committed.
 */
@Injectable()
export class PaymentSagaService {
  private readonly logger = new Logger(PaymentSagaService.name);
  private readonly hintIntervalMs: number;

  constructor(
    private readonly db: Database,
    private readonly payments: PaymentRepository,
    private readonly outbox: OutboxRepository,
    private readonly timers: TimerRepository,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    @Inject(PAYMENT_POLICY) private readonly policy: PaymentPolicy,
    @Inject(ORCHESTRATOR_CONFIG) config: OrchestratorConfig,
  ) {
    this.hintIntervalMs = config.policy.statusHintIntervalSeconds * 1000;
  }

  /**
   * A message from payments.commands.v1 (any JSON value). Throws PoisonMessageError when it
   * carries no command id and payment id to address a rejection to (→ DLQ).
   */
  async handleCommand(raw: unknown, meta: InputMeta): Promise<void> {
    const parsed = parseCommand(raw);
    const commandId = parsed.ok ? parsed.command.commandId : parsed.ids.commandId;
    const paymentId = parsed.ok ? parsed.command.paymentId : parsed.ids.paymentId;
    if (commandId === undefined || paymentId === undefined) {
      const reason = parsed.ok ? '' : `${parsed.reason}: ${describe(parsed.details)}`;
      throw new PoisonMessageError(`command without commandId/paymentId (${reason})`);
    }
    const fingerprint = parsed.ok
      ? commandFingerprint(parsed.command)
      : invalidCommandFingerprint(raw);
    const commandType = parsed.ok ? parsed.command.type : parsed.ids.type;
    await this.db.transaction(async (tx) => {
      const now = this.clock.now();
      const endpointId = parsed.ok ? parsed.command.merchant.endpointId : readEndpointId(raw);
      await this.payments.ensurePayment(tx, paymentId, endpointId, now);
      const row = await this.mustLock(tx, paymentId);
      const verdict = idempotencyVerdict(
        await this.payments.findCommand(tx, commandId),
        fingerprint,
      );
      switch (verdict) {
        case 'duplicate':
          await this.reemit(tx, commandId, meta);
          return;
        case 'conflict':
          await this.reject(tx, row, meta, now, {
            commandId,
            commandType,
            reason: 'DUPLICATE_COMMAND_CONFLICT',
            message: `command ${commandId} was already received with a different body`,
          });
          return;
        case 'new':
          break;
        default: {
          const never: never = verdict;
          throw new Error(`unhandled verdict ${String(never)}`);
        }
      }
      await this.payments.recordCommand(tx, commandId, fingerprint, paymentId, now);
      if (!parsed.ok) {
        await this.reject(tx, row, meta, now, {
          commandId,
          commandType,
          reason: parsed.reason,
          message: describe(parsed.details),
        });
        return;
      }
      await this.decideAndApply(tx, row, { kind: 'command', command: parsed.command }, meta, now);
    });
  }

  /** A GatewayResult (send result or status reply), deduplicated by requestId + attempt. */
  async handleGatewayResult(result: GatewayResult, meta: InputMeta): Promise<void> {
    await this.db.transaction(async (tx) => {
      const key = `${result.requestId}:${result.attempt}`;
      if (!(await this.outbox.recordInbox(tx, INBOX.gatewayResults, key))) return;
      const row = await this.payments.lockPayment(tx, result.paymentId);
      if (!row) {
        this.logger.warn(`gateway result for unknown payment ${result.paymentId} ignored`);
        return;
      }
      await this.decideAndApply(
        tx,
        row,
        { kind: 'gateway-result', result },
        meta,
        this.clock.now(),
      );
    });
  }

  /** A verified callback or a status-check hint, deduplicated by notificationId. */
  async handleCallback(message: CallbackMessage, meta: InputMeta): Promise<void> {
    await this.db.transaction(async (tx) => {
      if (!(await this.outbox.recordInbox(tx, INBOX.callbacks, message.notificationId))) return;
      const row = await this.payments.lockPayment(tx, message.paymentId);
      if (!row) {
        this.logger.warn(`${message.kind} for unknown payment ${message.paymentId} ignored`);
        return;
      }
      const now = this.clock.now();
      switch (message.kind) {
        case 'callback':
          await this.decideAndApply(tx, row, { kind: 'callback', callback: message }, meta, now);
          return;
        case 'status-check-hint': {
          // Unverified: at most one status refresh per payment per interval.
          if (!hintAllowed(row.lastHintAt, now, this.hintIntervalMs)) return;
          const decision = await this.decideAndApply(
            tx,
            row,
            { kind: 'status-check-hint', hint: message },
            meta,
            now,
          );
          if (decision.effects.length > 0) await this.payments.markHint(tx, row.id, now);
          return;
        }
        default: {
          const never: never = message;
          throw new Error(`unhandled callback message ${JSON.stringify(never)}`);
        }
      }
    });
  }

  /**
   * Claims and fires one due timer (FOR UPDATE SKIP LOCKED: concurrent workers never fire the same
   * one). `idle` when none is due; `taken` when another worker fired or a handler rescheduled it
   * while this one waited for the payment. A failed firing is rolled back, counted and postponed.
   */
  async fireNextDueTimer(): Promise<'fired' | 'taken' | 'idle'> {
    let claimed: TimerRow | undefined;
    try {
      return await this.db.transaction(async (tx) => {
        const now = this.clock.now();
        const next = await this.timers.nextDueTimer(tx, now);
        if (!next) return 'idle';
        // Lock order as in every handler, payment row first, then its timer: no deadlock.
        const row = await this.payments.lockPayment(tx, next.paymentId);
        claimed = await this.timers.claimTimer(tx, next.paymentId, next.kind, now);
        // Fired or rescheduled by someone else while we waited for the payment: go on.
        if (!claimed) return 'taken';
        if (!row) return 'fired';
        if (claimed.kind === 'gateway-resend') {
          await this.resend(tx, row, claimed.payload as ResendPayload, {}, now);
        } else {
          const timer = claimed.payload as Timer;
          await this.decideAndApply(tx, row, { kind: 'timer-fired', timer }, {}, now);
        }
        return 'fired';
      });
    } catch (error) {
      const failed: TimerRow | undefined = claimed;
      if (!failed) throw error;
      const retryAt = new Date(this.clock.now().getTime() + timerRetryDelayMs(failed.attempts));
      this.logger.error(
        `timer ${failed.kind} of payment ${failed.paymentId} failed (attempt ${failed.attempts + 1}); retry at ${retryAt.toISOString()}: ${String(error)}`,
      );
      await this.db.transaction((tx) =>
        this.timers.postponeTimer(tx, failed.paymentId, failed.kind, retryAt),
      );
      return 'fired';
    }
  }

  // ---- the decision and its effects, inside the caller's transaction ----------------------------

  private async decideAndApply(
    tx: EntityManager,
    row: PaymentRow,
    input: PaymentInput,
    meta: InputMeta,
    now: Date,
  ): Promise<Decision> {
    const ctx: DecisionContext = {
      now: now.toISOString(),
      ids: { next: () => this.ids.next() },
      policy: this.policy,
    };
    const decision = decide(input, row.state, ctx);
    if (decision.outcome === 'ignored') {
      this.logger.debug(`payment ${row.id}: ${input.kind} ignored (${decision.reason})`);
    }
    const state = await this.appendEvents(tx, row, decision.events, meta, now);
    const outbox: OutboxRow[] = [];
    for (const effect of decision.effects) {
      outbox.push(...(await this.applyEffect(tx, row.id, state, effect, meta, now)));
    }
    await this.outbox.enqueue(tx, outbox);
    return decision;
  }

  /** History rows, the new state under the version check, and one outbox row per event. */
  private async appendEvents(
    tx: EntityManager,
    row: PaymentRow,
    events: readonly PaymentEvent[],
    meta: InputMeta,
    now: Date,
  ): Promise<PaymentState> {
    if (events.length === 0) return row.state;
    const state = fold(row.state, events);
    const history: HistoryRow[] = events.map((event) => ({ eventId: this.ids.next(), event }));
    await this.payments.appendHistory(tx, history);
    await this.payments.savePayment(tx, row.id, state, row.version, now);
    await this.outbox.enqueue(
      tx,
      history.map((h) => eventRow(h.event, { rowId: h.eventId, ceId: h.eventId }, meta)),
    );
    if (isSettled(state)) await this.payments.purgeSealedCards(tx, row.id, now);
    return state;
  }

  private async applyEffect(
    tx: EntityManager,
    paymentId: string,
    state: PaymentState,
    effect: Effect,
    meta: InputMeta,
    now: Date,
  ): Promise<OutboxRow[]> {
    switch (effect.type) {
      case 'send-gateway-request':
        await this.payments.saveGatewayRequest(tx, effect.request, now);
        return [gatewayRequestRow(effect.request, this.ids.next(), now.toISOString(), meta)];
      case 'resend-gateway-request': {
        const payload: ResendPayload = { requestId: effect.requestId, attempt: effect.attempt };
        const notBefore = new Date(effect.notBefore);
        if (notBefore.getTime() > now.getTime()) {
          await this.timers.upsertTimer(tx, paymentId, 'gateway-resend', notBefore, payload);
          return [];
        }
        return this.resendRows(tx, state, payload, meta, now);
      }
      case 'schedule-timer':
        await this.timers.upsertTimer(
          tx,
          paymentId,
          effect.timer.kind,
          new Date(effect.at),
          effect.timer,
        );
        return [];
      case 'cancel-timer':
        await this.timers.deleteTimer(tx, paymentId, effect.timer);
        return [];
      default: {
        const never: never = effect;
        throw new Error(`unhandled effect ${JSON.stringify(never)}`);
      }
    }
  }

  /** A deferred resend came due: the ORIGINAL request (sealed card included), attempt bumped. */
  private async resend(
    tx: EntityManager,
    row: PaymentRow,
    payload: ResendPayload,
    meta: InputMeta,
    now: Date,
  ): Promise<void> {
    await this.outbox.enqueue(tx, await this.resendRows(tx, row.state, payload, meta, now));
  }

  private async resendRows(
    tx: EntityManager,
    state: PaymentState,
    payload: ResendPayload,
    meta: InputMeta,
    now: Date,
  ): Promise<OutboxRow[]> {
    if (!resendStillWanted(state, payload.requestId)) return [];
    const original = await this.payments.findGatewayRequest(tx, payload.requestId);
    if (!original) {
      this.logger.error(`resend of unknown gateway request ${payload.requestId} skipped`);
      return [];
    }
    return [
      gatewayRequestRow(
        { ...original, attempt: payload.attempt },
        this.ids.next(),
        now.toISOString(),
        meta,
      ),
    ];
  }

  /** Same command id and body again: publish the events it caused again, with their ce_ids. */
  private async reemit(tx: EntityManager, commandId: string, meta: InputMeta): Promise<void> {
    const history = await this.payments.eventsOfCommand(tx, commandId);
    await this.outbox.enqueue(
      tx,
      history.map((h) => eventRow(h.event, { rowId: this.ids.next(), ceId: h.eventId }, meta)),
    );
  }

  private async reject(
    tx: EntityManager,
    row: PaymentRow,
    meta: InputMeta,
    now: Date,
    rejection: {
      commandId: string;
      commandType: string | undefined;
      reason: RejectionCode;
      message: string;
    },
  ): Promise<void> {
    const event = rejectionEvent({
      ...rejection,
      paymentId: row.id,
      version: row.state.version + 1,
      now: now.toISOString(),
    });
    await this.appendEvents(tx, row, [event], meta, now);
  }

  private async mustLock(tx: EntityManager, paymentId: string): Promise<PaymentRow> {
    const row = await this.payments.lockPayment(tx, paymentId);
    if (!row) throw new Error(`payment ${paymentId} vanished inside its transaction`);
    return row;
  }
}

function describe(details: ReadonlyArray<{ path: string; message: string }>): string {
  return details
    .slice(0, 5)
    .map((d) => `${d.path}: ${d.message}`)
    .join('; ');
}
