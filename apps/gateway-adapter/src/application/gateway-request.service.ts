import { Inject, Injectable } from '@nestjs/common';
import type { GatewayClassification, GatewayRequest } from '@payments/contracts';
import { type Clock, maskCardNumbers } from '@payments/core';
import { ROOT_LOGGER } from '@payments/logging';
import type { CallResult } from '@payments/payment-gateway';
import type { Logger } from 'pino';
import { ADAPTER_REASONS, type ClassifiableReply, classifyCall } from '../domain/classify';
import { callbackUrl, type GatewayCall, isMutating, planCall } from '../domain/operation-table';
import { SemaphoreTimeoutError } from '../domain/semaphore';
import type { StatusAnswer } from '../domain/status-budget';
import { GATEWAY_ADAPTER_CONFIG, type GatewayAdapterConfig } from '../config';
import { type SentRequestRecord, SentRequestsLedger } from '../persistence/sent-requests.ledger';
import { adapterMetrics } from './metrics';
import type { CardOpener } from '../secrets/credentials';
import { ADAPTER_CLOCK, CARD_OPENER, GATEWAY_ENDPOINTS } from '../tokens';
import type { GatewayEndpoint, GatewayEndpoints } from './gateway-endpoints';
import { RequestHandoffs } from '../persistence/request-handoffs';
import { answerHeaders, HandoffKeeper } from './handoff-keeper';
import { addressOf, ResultPublisher } from './result-publisher';

type Answer = {
  readonly result: GatewayClassification;
  readonly source: 'gateway' | 'adapter';
  /** When the gateway's HTTP answer came (accepted or rejected replies only). */
  readonly answeredAt?: string;
};
/**
 * The attempt is no longer this process's to send (its hand-off's fence failed: the sweep answered
 * it unknown, or will): no call, no answer of its own, its row and ledger claim left as they are.
 */
const FENCED = 'fenced' as const;

const adapter = (result: GatewayClassification): Answer => ({ result, source: 'adapter' });
/**
 * Not sent because of our own limits (breaker, rate limit, concurrency): `retryAt` tells the
 * orchestrator the earliest instant a resend can go out, so it waits instead of spending its send
 * attempts. A gateway-side not-sent (connect refused …) comes from classifyCall, without one.
 */
const heldBack = (reason: string, retryAtMs: number): Answer =>
  adapter({ kind: 'not-sent', reason, retryAt: new Date(retryAtMs).toISOString() });

/**
 * Where a money operation's sent-requests claim stands: taken with the hand-off (`held`: this run
 * owns the row; `refused`: another attempt, or this one before, may have been sent) or still to
 * be taken just before the call (`at-call`, GATEWAY_CLAIM_AT_HANDOFF=false, and every request
 * that is not a money operation, which never claims).
 */
type LedgerClaim = 'at-call' | 'held' | 'refused';

/** The sent-requests ledger's row of a request. */
const ledgerRecord = (request: GatewayRequest): SentRequestRecord => ({
  requestId: request.requestId,
  attempt: request.attempt,
  operation: request.operation,
  paymentId: request.paymentId,
  endpointId: request.merchant.endpointId,
  clientOrderId: request.clientOrderId,
});

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * The adapter's own database failed at the hand-off's fence, the last step before the call: this
 * run did not send the request, so it may run it again once the database answers.
 */
class NotSentYet extends Error {
  constructor(readonly reason: unknown) {
    super(reason instanceof Error ? reason.message : String(reason));
  }
}

/**
 * How long a handed-off request whose run failed before its call (NotSentYet) is run again,
 * keeping its hand-off (the lease renewed once the database answers): a PostgreSQL failover's
 * ≈ 11 s and the chaos run's 12-s outage fit in it. Before, the run gave up at the first error,
 * the lease ran out and the sweep answered `unknown` ("may have been sent") for a request never
 * sent: an opening operation with no trace at the gateway then stays unknown with the alert
 * raised under the safe resend default (the failover suite's sale "never final", session 17).
 */
export const NOT_SENT_RETRY_MS = 60_000;

/** The pause before running such a request again: 250 ms doubling, at most 2 s. */
const notSentBackoff = (retry: number): number => Math.min(2_000, 250 * 2 ** retry);

/**
 * Accepts gateway requests from Kafka and hands them off, then performs each and publishes its
 * classified result.
 *
 * Why a hand-off: the Kafka consumer works on a few partitions at a time, one message after
 * another in each. When the gateway call ran inside the message handler, a request waiting for
 * its endpoint's slot (up to `maxWaitMs`) or a slow call (up to the response timeout) held its
 * partition, and a few such requests held every partition: one slow endpoint stalled every
 * merchant's payments. Now `accept` answers at once what needs no gateway (unknown endpoint, the
 * endpoint's lane full), else records the request in `adapter_request_handoffs` and books it into
 * its endpoint's lane (domain/endpoint-lanes: per-endpoint bound, one saga's requests in order),
 * and returns, so the message is committed. Chosen over a key-ordered parallel consumer in
 * libs/kafka because the guarantees then stay where they are: the sent-requests ledger is still
 * the only guard against a second send, and a replica that dies leaves durable rows that another
 * replica answers `unknown` (HandoffKeeper's sweep) instead of in-memory offsets to reason about.
 *
 * Order of the guards when a request runs:
 *  1. endpoint lookup (no credentials → rejected "unknown-endpoint": nothing was sent);
 *  2. money operations: circuit breaker open → not-sent "circuit open" (no ledger, no network);
 *     status queries pass it (they move no money; CircuitBreaker.statusPermit: counted while
 *     closed, the trial when half-open, nothing while open);
 *  3. money operations: rate limit (bounded wait) and concurrency slot (bounded wait) → else
 *     not-sent; status queries: the endpoint's status budget admits them now or they are
 *     not-sent at once (they never wait, so they never hold up a money operation);
 *     every not-sent of 2–3 (our own limits) carries `retryAt`: when the breaker half-opens, when
 *     the next token is due, or now + the slot wait;
 *  4. mutating operations: the sent-requests ledger row is committed first; if it exists the
 *     request may already have been sent → unknown, and the gateway is not called. By default
 *     the row is written by the hand-off's statement (one commit for both); a request then
 *     answered by 2–3 or refused its card releases it before its answer goes out. Then the
 *     fence: the hand-off must still be this run's (row, owner, lease), else nothing is sent or
 *     answered (the sweep answered it unknown);
 *  5. the card is opened just before signing (sale/preauth only), the call is made;
 *  6. not-sent deletes the ledger row (a resend is safe); every other outcome keeps it.
 * Only infrastructure failures (database, broker) throw, never a gateway outcome: from `accept`
 * before the hand-off is recorded, the Kafka message stays uncommitted (the runner retries); in
 * the lane, the hand-off row is left unrenewed and the sweep answers it unknown.
 */
@Injectable()
export class GatewayRequestService {
  private readonly metrics = adapterMetrics();

  constructor(
    @Inject(GATEWAY_ENDPOINTS) private readonly endpoints: GatewayEndpoints,
    @Inject(CARD_OPENER) private readonly cards: CardOpener,
    @Inject(GATEWAY_ADAPTER_CONFIG) private readonly config: GatewayAdapterConfig,
    @Inject(ROOT_LOGGER) private readonly logger: Logger,
    @Inject(ADAPTER_CLOCK) private readonly clock: Clock,
    private readonly ledger: SentRequestsLedger,
    private readonly publisher: ResultPublisher,
    private readonly handoffs: RequestHandoffs,
    private readonly keeper: HandoffKeeper,
  ) {}

  /**
   * The Kafka handler's entry. Throws only on infrastructure failures before the hand-off was
   * recorded (the runner retries the message). A redelivered message of an attempt that is
   * already handed off is acknowledged without running it again: its owner answers it, or, if
   * the owner died, the sweep answers it unknown.
   */
  async accept(
    request: GatewayRequest,
    headers: Readonly<Record<string, string>> = {},
  ): Promise<void> {
    const endpoint = this.endpoints.find(request.merchant.endpointId);
    if (!endpoint) {
      if (await this.alreadyTaken(request)) return;
      await this.answer(request, headers, performance.now(), this.unknownEndpoint(request));
      return;
    }
    const ticket = this.keeper.lanes.reserve(endpoint.id);
    if (!ticket) {
      if (await this.alreadyTaken(request)) return;
      const full = heldBack(ADAPTER_REASONS.queueFull, this.afterSlotWait(endpoint));
      await this.answer(request, headers, performance.now(), full);
      return;
    }
    const claim =
      this.config.handoff.claimAtHandoff && isMutating(request)
        ? {
            record: ledgerRecord(request),
            options: { afterNoTrace: request.afterNoTrace === true },
          }
        : undefined;
    let handedOff: boolean;
    let claimed: boolean;
    try {
      ({ handedOff, claimed } = await this.handoffs.accept(
        { ...addressOf(request), endpointId: endpoint.id, headers: answerHeaders(headers) },
        this.keeper.owner,
        this.keeper.leaseMs,
        claim,
      ));
    } catch (error) {
      ticket.cancel();
      throw error;
    }
    if (!handedOff) {
      ticket.cancel();
      this.logger.info(
        { requestId: request.requestId, attempt: request.attempt, operation: request.operation },
        'gateway request already handed off; its owner or the sweep answers it',
      );
      return;
    }
    this.keeper.track(request.requestId, request.attempt);
    const ledger: LedgerClaim = claim === undefined ? 'at-call' : claimed ? 'held' : 'refused';
    ticket.start(request.paymentId, () => this.runHandedOff(request, headers, ledger));
  }

  /**
   * A redelivered message of an attempt already handed off (another replica, or this one, runs
   * it) or in the ledger is not answered by the adapter itself: "queue full" or "unknown endpoint"
   * reaching the orchestrator before the real answer would read as not sent (and be resent) or
   * refused while the attempt may be at the gateway. The first answer of an attempt is the one
   * taken (its result id), so nothing else needs saying.
   */
  private async alreadyTaken(request: GatewayRequest): Promise<boolean> {
    if (!(await this.handoffs.taken(request.requestId, request.attempt))) return false;
    this.logger.info(
      { requestId: request.requestId, attempt: request.attempt, operation: request.operation },
      'gateway request already handed off or sent; its owner, the sweep or its earlier answer says it',
    );
    return true;
  }

  /**
   * Runs a handed-off request to its published answer, then removes its row. A failure (database,
   * broker) leaves the row, no longer renewed: once its lease runs out the sweep answers unknown.
   */
  private async runHandedOff(
    request: GatewayRequest,
    headers: Readonly<Record<string, string>>,
    ledger: LedgerClaim,
  ): Promise<void> {
    const until = performance.now() + NOT_SENT_RETRY_MS;
    try {
      for (let retry = 0; ; retry++) {
        try {
          // Fenced: the row is the sweep's (answered unknown, or to be), not this run's to remove.
          if ((await this.execute(request, headers, ledger)) === FENCED) return;
          await this.handoffs.finish(request.requestId, request.attempt);
          return;
        } catch (error) {
          // Not sent by this run: run again (still tracked, so the keeper renews its lease once
          // the database answers; a sweep that answered it meanwhile fences the next run).
          if (!(error instanceof NotSentYet) || performance.now() >= until) throw error;
          this.logger.warn(
            {
              requestId: request.requestId,
              attempt: request.attempt,
              operation: request.operation,
              retry: retry + 1,
              error: maskCardNumbers(error.message),
            },
            "gateway request not sent: the adapter's database failed before the call; run again",
          );
          await sleep(notSentBackoff(retry));
          await this.handoffs
            .renew(this.keeper.owner, [request], this.keeper.leaseMs)
            .catch(() => undefined);
        }
      }
    } catch (error) {
      this.logger.error(
        {
          requestId: request.requestId,
          attempt: request.attempt,
          operation: request.operation,
          error: maskCardNumbers(error instanceof Error ? error.message : String(error)),
        },
        'handed-off gateway request failed; the sweep answers it unknown once its lease runs out',
      );
    } finally {
      this.keeper.untrack(request.requestId, request.attempt);
    }
  }

  private async execute(
    request: GatewayRequest,
    headers: Readonly<Record<string, string>>,
    ledger: LedgerClaim,
  ): Promise<typeof FENCED | undefined> {
    const started = performance.now();
    const answer = await this.perform(request, ledger);
    if (answer === FENCED) {
      this.logger.warn(
        {
          requestId: request.requestId,
          paymentId: request.paymentId,
          operation: request.operation,
          attempt: request.attempt,
          endpointId: request.merchant.endpointId,
        },
        'gateway request not sent: its hand-off lease ran out and the sweep answers it unknown',
      );
      return FENCED;
    }
    // A claim taken at the hand-off for a request the adapter then answered itself (held back by
    // its limits, breaker open, card unreadable) was never sent: released before the answer goes
    // out, as a not-sent call's is, so the orchestrator's resend is not refused by it.
    if (ledger === 'held' && answer.source === 'adapter') {
      await this.ledger.release(request.requestId, request.attempt);
    }
    await this.answer(request, headers, started, answer);
    return undefined;
  }

  private async answer(
    request: GatewayRequest,
    headers: Readonly<Record<string, string>>,
    started: number,
    answer: Answer,
  ): Promise<void> {
    await this.publisher.publish(addressOf(request), answer.result, headers, answer.answeredAt);
    this.metrics.results.inc({
      operation: request.operation,
      kind: answer.result.kind,
      source: answer.source,
    });
    const r = answer.result;
    this.logger.info(
      {
        requestId: request.requestId,
        paymentId: request.paymentId,
        operation: request.operation,
        attempt: request.attempt,
        endpointId: request.merchant.endpointId,
        // A status query's class: whose queries the budget admits or holds (issue #38).
        ...(request.operation === 'status' ? { priority: request.priority ?? 'routine' } : {}),
        result: r.kind,
        ...(r.kind === 'not-sent' || r.kind === 'unknown' ? { reason: r.reason } : {}),
        ...(r.kind === 'not-sent' && r.retryAt !== undefined ? { retryAt: r.retryAt } : {}),
        ...(r.kind === 'rejected' ? { code: r.code } : {}),
        ...(r.kind === 'accepted' && r.gatewayOrderId ? { gatewayOrderId: r.gatewayOrderId } : {}),
        source: answer.source,
        durationMs: Math.round(performance.now() - started),
      },
      'gateway request handled',
    );
  }

  private async perform(
    request: GatewayRequest,
    ledger: LedgerClaim,
  ): Promise<Answer | typeof FENCED> {
    const endpoint = this.endpoints.find(request.merchant.endpointId);
    if (!endpoint) return this.unknownEndpoint(request);
    // A status query passes an open breaker (CircuitBreaker.statusPermit): it moves no money and
    // its own budget bounds its rate.
    if (request.operation === 'status') return this.performStatus(request, endpoint, ledger);
    if (endpoint.breaker.isRefusing()) return this.circuitOpen(endpoint);

    const waitMs = endpoint.bucket.reserve(endpoint.limits.maxWaitMs);
    if (waitMs === undefined) {
      return heldBack(ADAPTER_REASONS.rateLimited, endpoint.bucket.availableAt());
    }
    if (waitMs > 0) await sleep(waitMs);

    let releaseSlot: () => void;
    try {
      releaseSlot = await endpoint.slots.acquire(AbortSignal.timeout(endpoint.limits.maxWaitMs));
    } catch (error) {
      if (error instanceof SemaphoreTimeoutError) {
        return heldBack(ADAPTER_REASONS.concurrencyLimited, this.afterSlotWait(endpoint));
      }
      throw error;
    }
    try {
      return await this.guardedCall(request, endpoint, ledger);
    } finally {
      releaseSlot();
    }
  }

  /**
   * A status query never books a token or a slot ahead: it is sent when the endpoint's status
   * budget admits it (StatusBudget: one per payment at a time, its own bucket, never the tokens or
   * the slot kept for money operations), at once or after waiting in the budget's room (at most
   * its `waitMs`, in its own lane place: other sagas' requests run meanwhile); otherwise answered
   * not-sent with `retryAt`.
   */
  private async performStatus(
    request: GatewayRequest,
    endpoint: GatewayEndpoint,
    ledger: LedgerClaim,
  ): Promise<Answer | typeof FENCED> {
    const priority = (request.operation === 'status' ? request.priority : undefined) ?? 'routine';
    const admission = await new Promise<StatusAnswer>((resolve) => {
      const now = endpoint.statusBudget.admit(
        request.paymentId,
        priority,
        resolve,
        // A hint's query (a verified callback said money moved) goes before the unknowns' in
        // its class: the truth is there to be read (issue #38's bound with a callback).
        request.operation === 'status' && request.urgentSince !== undefined,
      );
      if (now.kind !== 'wait') resolve(now);
    });
    this.metrics.statusAdmissions.inc({
      endpoint: endpoint.id,
      priority,
      outcome: admission.kind === 'held' ? 'held' : 'admitted',
    });
    if (admission.kind === 'held') return heldBack(admission.reason, admission.retryAt);
    try {
      return await this.guardedCall(request, endpoint, ledger);
    } finally {
      admission.done();
    }
  }

  private async guardedCall(
    request: GatewayRequest,
    endpoint: GatewayEndpoint,
    ledger: LedgerClaim,
  ): Promise<Answer | typeof FENCED> {
    const permit =
      request.operation === 'status'
        ? endpoint.breaker.statusPermit()
        : endpoint.breaker.tryAcquire();
    if (!permit) return this.circuitOpen(endpoint);
    let settled = false;
    try {
      const call = this.buildCall(request, endpoint);
      if (call.kind === 'refused') {
        return adapter(call.result);
      }
      const mutating = call.mutating;
      if (mutating) {
        // A claim at call time whose commit is unknown is not run again here: run again it would
        // find its own row and answer "may have been sent" (SentRequestsLedger.claim).
        const claimed =
          ledger === 'at-call'
            ? await this.ledger.claim(ledgerRecord(request), {
                afterNoTrace: request.afterNoTrace === true,
              })
            : ledger === 'held';
        if (!claimed) {
          return adapter({ kind: 'unknown', reason: ADAPTER_REASONS.mayHaveBeenSent });
        }
        // Fencing, at call time: a run that stalled (a slot or token wait, a paused process) past
        // its hand-off's lease must not send what the sweep has answered unknown meanwhile.
        // The fence is the last database answer before the call, and running it again only
        // extends the lease: a failure there is NotSentYet (the run is repeated).
        const own = await this.handoffs
          .fence(request.requestId, request.attempt, this.keeper.owner, this.keeper.leaseMs)
          .catch((error: unknown) => {
            throw new NotSentYet(error);
          });
        if (!own) return FENCED;
      }
      const result = await this.send(call.call, endpoint);
      const answered = result.outcome === 'accepted' || result.outcome === 'rejected';
      // The gateway's replies carry no time: the answer's time is when it came (time to truth).
      const answeredAt = answered ? new Date(this.clock.now()).toISOString() : undefined;
      settled = true;
      if (result.outcome === 'accepted' || result.outcome === 'rejected') permit.success();
      else permit.failure();
      if (result.outcome === 'not-sent' && mutating) {
        await this.ledger.release(request.requestId, request.attempt);
      }
      return {
        result: classifyCall(result, {
          operation: request.operation,
          ...(request.operation === 'status' && request.subjectSerial !== undefined
            ? { subjectSerial: request.subjectSerial }
            : {}),
        }),
        source: 'gateway',
        ...(answeredAt === undefined ? {} : { answeredAt }),
      };
    } finally {
      if (!settled) permit.cancel();
    }
  }

  private unknownEndpoint(request: GatewayRequest): Answer {
    return adapter({
      kind: 'rejected',
      code: 'unknown-endpoint',
      message: `the adapter has no credentials for endpoint ${request.merchant.endpointId}`,
    });
  }

  /**
   * Refused by our own breaker: come back when it half-opens; while a half-open trial is in
   * flight (its outcome decides), after one slot wait.
   */
  private circuitOpen(endpoint: GatewayEndpoint): Answer {
    return heldBack(
      ADAPTER_REASONS.circuitOpen,
      endpoint.breaker.halfOpensAt() ?? this.afterSlotWait(endpoint),
    );
  }

  /** A short, sane instant for a request refused a slot: now + the bounded slot wait. */
  private afterSlotWait(endpoint: GatewayEndpoint): number {
    return this.clock.now() + endpoint.limits.maxWaitMs;
  }

  /**
   * The call from the request's row of the operation table; a row that sends a card gets it
   * opened here, just before signing.
   */
  private buildCall(
    request: GatewayRequest,
    endpoint: GatewayEndpoint,
  ):
    | { readonly kind: 'call'; readonly call: GatewayCall; readonly mutating: boolean }
    | { readonly kind: 'refused'; readonly result: GatewayClassification } {
    const plan = planCall(request);
    switch (plan.needs) {
      case 'nothing': {
        const context = {
          serverCallbackUrl: callbackUrl(this.config.callbackBaseUrl, endpoint.id),
          cardRefApi: endpoint.cardRefApi,
        };
        return { kind: 'call', call: plan.call(context), mutating: plan.mutating };
      }
      case 'sealed-card': {
        let cards;
        try {
          cards = plan.sealedCards.map((sealed) => this.cards.open(sealed, request.paymentId));
        } catch {
          // One code for every failure (malformed, wrong key, tampered): no decryption oracle.
          return {
            kind: 'refused',
            result: {
              kind: 'rejected',
              code: 'card-unreadable',
              message: 'the sealed card could not be opened by the gateway-adapter',
            },
          };
        }
        const cb = callbackUrl(this.config.callbackBaseUrl, endpoint.id);
        return { kind: 'call', call: plan.call(cards, cb), mutating: plan.mutating };
      }
      case 'callback-url': {
        const cb = callbackUrl(this.config.callbackBaseUrl, endpoint.id);
        return { kind: 'call', call: plan.call(cb), mutating: plan.mutating };
      }
      default: {
        const never: never = plan;
        return never;
      }
    }
  }

  private async send(
    call: GatewayCall,
    endpoint: GatewayEndpoint,
  ): Promise<CallResult<ClassifiableReply>> {
    const stop = this.metrics.callDuration.startTimer({
      operation: call.id,
      endpoint: endpoint.name,
    });
    const result = await endpoint.client.call(call);
    stop();
    this.metrics.calls.inc({
      operation: call.id,
      outcome: result.outcome,
      endpoint: endpoint.name,
    });
    return result;
  }
}
