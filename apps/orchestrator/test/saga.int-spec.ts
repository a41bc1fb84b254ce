/**
 * The orchestrator's saga end to end inside one process: the real broker (KAFKA_BROKERS) and a
 * fresh test database. Commands, gateway results and callbacks are produced to their topics as
 * the internal services, the gateway-adapter and callback-ingest would; what comes out is read
 * from payments.events.v1 and payments.gateway.requests.v1.
 */
import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import type { GatewayRequest, PaymentEvent } from '@payments/contracts';
import { PLACEHOLDER_SEALED_CARD, saleCommand } from '@payments/contracts/testing';
import { createTestDatabase, type TestDatabase } from '@payments/testing';
import {
  type RunningOrchestrator,
  startOrchestrator,
  TestProducer,
  TopicCollector,
  waitFor,
} from '../../../test/support/orchestrator';

// The project's testTimeout is not applied to hooks when a path is given: set it here.
jest.setTimeout(120_000);

const T = () => new Date().toISOString();

describe('orchestrator saga (real broker + PostgreSQL)', () => {
  let db: TestDatabase;
  let orchestrator: RunningOrchestrator;
  let pg: Client;
  const collector = new TopicCollector();
  const producer = new TestProducer();

  beforeAll(async () => {
    db = await createTestDatabase('orch_saga');
    await collector.start();
    await producer.connect();
    orchestrator = await startOrchestrator(db.url, { HOLD_EXPIRY_SECONDS: '3600' });
    pg = new Client({ connectionString: db.url });
    await pg.connect();
  });

  afterAll(async () => {
    await pg?.end();
    await orchestrator?.close();
    await producer.disconnect();
    await collector.stop();
    await db?.drop();
  });

  const query = async <R>(sql: string, params: unknown[] = []): Promise<R[]> =>
    (await pg.query(sql, params)).rows as R[];

  const types = (events: Array<{ value: PaymentEvent }>) => events.map((e) => e.value.type);
  const versions = (events: Array<{ value: PaymentEvent }>) => events.map((e) => e.value.version);

  function newSale(overrides: Record<string, unknown> = {}) {
    return saleCommand({ paymentId: randomUUID(), commandId: randomUUID(), ...overrides });
  }

  function accepted(
    request: GatewayRequest,
    gatewayOrderId = `gw-${request.paymentId.slice(0, 8)}`,
  ) {
    return {
      requestId: request.requestId,
      paymentId: request.paymentId,
      operation: request.operation,
      attempt: request.attempt,
      // The gateway names the request's serial number in its reply.
      result: { kind: 'accepted', gatewayOrderId, serialNumber: `sn-${request.requestId}` },
      completedAt: T(),
    };
  }

  function callback(
    paymentId: string,
    status: string,
    extra: Record<string, unknown> = {},
    notificationId = randomUUID(),
  ) {
    return {
      kind: 'callback',
      notificationId,
      paymentId,
      clientOrderId: paymentId,
      source: 'server-callback',
      // A real server callback names its transaction and amount; most payments here are sales
      // of saleCommand()'s amount.
      report: {
        status,
        gatewayOrderId: `gw-${paymentId.slice(0, 8)}`,
        transactionType: 'sale',
        amount: { minor: 10_000, currency: 'EUR' },
        ...extra,
      },
      receivedAt: T(),
    };
  }

  async function getPayment(
    id: string,
  ): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await fetch(`${orchestrator.url}/payments/${id}`);
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  /** A sale taken to `processing`: its gateway request and the accepted result. */
  async function saleInProcessing(): Promise<{ paymentId: string; request: GatewayRequest }> {
    const command = newSale();
    await producer.command(command);
    const [request] = await collector.waitForRequests(command.paymentId, 1);
    await producer.result(accepted(request.value));
    await collector.waitForEvents(command.paymentId, 2);
    return { paymentId: command.paymentId, request: request.value };
  }

  it('runs a sale: gateway request, accepted, processing, then approved by a callback', async () => {
    const command = newSale();
    await producer.command(command);

    const [request] = await collector.waitForRequests(command.paymentId, 1);
    expect(request.value).toMatchObject({
      operation: 'sale',
      paymentId: command.paymentId,
      clientOrderId: command.paymentId,
      attempt: 1,
      amount: { minor: 10_000, currency: 'EUR' },
      sealedCard: PLACEHOLDER_SEALED_CARD,
    });
    expect(request.headers).toMatchObject({
      ce_subject: command.paymentId,
      ce_type: 'com.example.payments.gateway.request.sale.v1',
      ce_source: '/payments/orchestrator',
    });
    const [requested] = await collector.waitForEvents(command.paymentId, 1);
    expect(requested.value).toMatchObject({ type: 'operation-requested', version: 1 });

    await producer.result(accepted(request.value));
    await collector.waitForEvents(command.paymentId, 2);
    expect((await getPayment(command.paymentId)).body.status).toBe('processing');

    await producer.callback(callback(command.paymentId, 'approved', { approvalCode: 'A1' }));
    const events = await collector.waitForEvents(command.paymentId, 3);
    expect(types(events)).toEqual(['operation-requested', 'accepted-by-gateway', 'approved']);
    expect(versions(events)).toEqual([1, 2, 3]);
    for (const e of events) {
      expect(e.headers.ce_subject).toBe(command.paymentId);
      expect(e.headers.ce_type).toBe(`com.example.payments.payment.${e.value.type}.v1`);
      expect(e.headers.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/);
    }
    expect(new Set(events.map((e) => e.headers.ce_id)).size).toBe(3);

    // The read API: amounts in minor units, history in version order.
    const { status, body } = await getPayment(command.paymentId);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      paymentId: command.paymentId,
      kind: 'sale',
      status: 'approved',
      version: 3,
      amounts: {
        currency: 'EUR',
        requested: 10_000,
        authorized: 10_000,
        captured: 10_000,
        returned: 0,
      },
    });
    expect((body.history as PaymentEvent[]).map((e) => e.version)).toEqual([1, 2, 3]);

    // Settled: the sealed card is gone from the stored request and from published outbox rows.
    const stored = await query<{ has: boolean; purged: Date | null }>(
      `SELECT body ? 'sealedCard' AS has, sealed_card_purged_at AS purged
         FROM gateway_requests WHERE saga_id = $1`,
      [command.paymentId],
    );
    expect(stored).toEqual([{ has: false, purged: expect.any(Date) }]);
    const outboxCards = await query(
      `SELECT 1 FROM outbox WHERE aggregate_id = $1 AND payload ? 'sealedCard'`,
      [command.paymentId],
    );
    expect(outboxCards).toHaveLength(0);
  });

  it('answers 404 for an unknown payment and 400 for an id that is not a UUID', async () => {
    const missing = await getPayment(randomUUID());
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ error: { code: 'PAYMENT_NOT_FOUND' } });
    expect((await getPayment('not-a-uuid')).status).toBe(400);
  });

  it('declines a sale from a status reply', async () => {
    const { paymentId, request } = await saleInProcessing();
    await producer.result({
      requestId: randomUUID(),
      paymentId,
      operation: 'status',
      subjectRequestId: request.requestId,
      attempt: 1,
      result: { kind: 'accepted', report: { status: 'declined', errorCode: '05' } },
      completedAt: T(),
    });
    const events = await collector.waitForEvents(paymentId, 3);
    expect(types(events)).toEqual(['operation-requested', 'accepted-by-gateway', 'declined']);
    expect(versions(events)).toEqual([1, 2, 3]);
    expect((await getPayment(paymentId)).body.status).toBe('declined');
  });

  it('treats the same command three times as one: one gateway request, events re-published with the same ce_id', async () => {
    const command = newSale();
    await producer.command(command);
    await producer.command(command);
    await producer.command({ ...command, occurredAt: T() }); // a re-stamped retry is the same command
    // Every copy re-emits operation-requested (same partition, so processed in order).
    const events = await collector.waitForEvents(command.paymentId, 3);
    expect(types(events)).toEqual([
      'operation-requested',
      'operation-requested',
      'operation-requested',
    ]);
    expect(new Set(events.map((e) => e.headers.ce_id)).size).toBe(1);
    expect(new Set(events.map((e) => e.value.version))).toEqual(new Set([1]));

    expect(collector.requests(command.paymentId)).toHaveLength(1);
    const requests = await query(`SELECT 1 FROM gateway_requests WHERE saga_id = $1`, [
      command.paymentId,
    ]);
    expect(requests).toHaveLength(1);
  });

  it('rejects the same command id with a different body', async () => {
    const command = newSale();
    await producer.command(command);
    await producer.command({ ...command, amount: { minor: 99_999, currency: 'EUR' } });
    const events = await collector.waitForEvents(command.paymentId, 2);
    expect(events[1].value).toMatchObject({
      type: 'command-rejected',
      version: 2,
      commandId: command.commandId,
      reason: 'DUPLICATE_COMMAND_CONFLICT',
    });
    expect(collector.requests(command.paymentId)).toHaveLength(1);
  });

  it('rejects a schema-invalid command with ids, and dead-letters one without ids or not JSON', async () => {
    const paymentId = randomUUID();
    const commandId = randomUUID();
    await producer.command({ type: 'sale', paymentId, commandId, amount: { minor: -5 } });
    const [rejected] = await collector.waitForEvents(paymentId, 1);
    expect(rejected.value).toMatchObject({
      type: 'command-rejected',
      // The payment does not exist and is not created for an invalid command.
      version: 0,
      commandId,
      commandType: 'sale',
      reason: 'SCHEMA_INVALID',
    });
    expect(collector.requests(paymentId)).toHaveLength(0);
    expect(await query(`SELECT 1 FROM sagas WHERE id = $1`, [paymentId])).toHaveLength(0);
    expect((await getPayment(paymentId)).status).toBe(404);

    const noIds = randomUUID();
    await producer.send(
      'payments.commands.v1',
      noIds,
      { type: 'sale' },
      'com.example.payments.command.sale.v1',
      '/tests',
    );
    const notJson = randomUUID();
    await producer.send(
      'payments.commands.v1',
      notJson,
      '{not json',
      'com.example.payments.command.sale.v1',
      '/tests',
    );
    const [dlqNoIds] = await waitFor(() => {
      const d = collector.deadLetters(noIds);
      return d.length > 0 ? d : undefined;
    }, 'dead letter of the command without ids');
    expect(dlqNoIds.headers['dlq-reason']).toBe('non-retriable');
    const [dlqNotJson] = await waitFor(() => {
      const d = collector.deadLetters(notJson);
      return d.length > 0 ? d : undefined;
    }, 'dead letter of the non-JSON command');
    expect(dlqNotJson.headers['dlq-reason']).toBe('parse');
  });

  it('keeps an unknown outcome unknown: status polls go out, the hour alert is raised, never failed by time', async () => {
    const command = newSale();
    await producer.command(command);
    const [request] = await collector.waitForRequests(command.paymentId, 1);
    await producer.result({
      ...accepted(request.value),
      result: { kind: 'unknown', reason: 'timeout after sending' },
    });
    const events = await collector.waitForEvents(command.paymentId, 2);
    expect(events[1].value).toMatchObject({ type: 'outcome-unknown', alert: false });

    // The status-poll timer fires (a few seconds) and asks the gateway.
    const polls = await collector.waitForRequests(command.paymentId, 2, 20_000);
    expect(polls[1].value).toMatchObject({
      operation: 'status',
      subjectRequestId: request.value.requestId,
      clientOrderId: command.paymentId,
    });
    expect(polls[1].value).not.toHaveProperty('sealedCard');

    // Two hours later (the timers run on the injected clock): an alert, still unknown.
    orchestrator.clock.offsetMs = 2 * 60 * 60 * 1000;
    try {
      const later = await collector.waitForEvents(command.paymentId, 3, 20_000);
      expect(later[2].value).toMatchObject({ type: 'outcome-unknown', alert: true, version: 3 });
      await collector.waitForRequests(command.paymentId, 3, 20_000);
    } finally {
      orchestrator.clock.offsetMs = 0;
    }
    const { body } = await getPayment(command.paymentId);
    expect(body.status).toBe('outcome-unknown');
    expect(types(collector.events(command.paymentId))).not.toContain('failed');
    expect(types(collector.events(command.paymentId))).not.toContain('declined');
    const timers = await query<{ kind: string }>(
      `SELECT kind FROM timers WHERE saga_id = $1 ORDER BY kind`,
      [command.paymentId],
    );
    expect(timers.map((t) => t.kind)).toEqual(['status-poll']);

    // Only a status reply resolves it.
    await producer.result({
      requestId: randomUUID(),
      paymentId: command.paymentId,
      operation: 'status',
      subjectRequestId: request.value.requestId,
      attempt: 1,
      result: {
        kind: 'accepted',
        report: { status: 'approved', gatewayOrderId: 'gw-late', amount: command.amount },
      },
      completedAt: T(),
    });
    const resolved = await collector.waitForEvents(command.paymentId, 4);
    expect(resolved[3].value).toMatchObject({ type: 'approved', version: 4 });
  });

  it('rejects a capture above the authorized amount before any gateway request, then captures within it', async () => {
    const preauth = newSale({ type: 'preauth' });
    await producer.command({ ...preauth, type: 'preauth' });
    const [request] = await collector.waitForRequests(preauth.paymentId, 1);
    await producer.result(accepted(request.value));
    await producer.callback(
      callback(preauth.paymentId, 'approved', { transactionType: 'preauth' }),
    );
    const authorized = await collector.waitForEvents(preauth.paymentId, 3);
    expect(authorized[2].value).toMatchObject({ type: 'authorized', version: 3 });
    const hold = await query(`SELECT 1 FROM timers WHERE saga_id = $1 AND kind = 'hold-expiry'`, [
      preauth.paymentId,
    ]);
    expect(hold).toHaveLength(1);

    const tooMuch = {
      type: 'capture',
      commandId: randomUUID(),
      paymentId: preauth.paymentId,
      merchant: { endpointId: '1234' },
      occurredAt: T(),
      amount: { minor: 10_001, currency: 'EUR' },
    };
    await producer.command(tooMuch);
    const afterReject = await collector.waitForEvents(preauth.paymentId, 4);
    expect(afterReject[3].value).toMatchObject({
      type: 'command-rejected',
      reason: 'AMOUNT_EXCEEDS_AUTHORIZED',
      commandId: tooMuch.commandId,
      version: 4,
    });
    expect(collector.requests(preauth.paymentId)).toHaveLength(1);

    const capture = {
      ...tooMuch,
      commandId: randomUUID(),
      amount: { minor: 4_000, currency: 'EUR' },
    };
    await producer.command(capture);
    const requests = await collector.waitForRequests(preauth.paymentId, 2);
    expect(requests[1].value).toMatchObject({
      operation: 'capture',
      amount: { minor: 4_000, currency: 'EUR' },
      gatewayOrderId: `gw-${preauth.paymentId.slice(0, 8)}`,
    });
    await producer.result(accepted(requests[1].value));
    // A callback about a capture is only a hint (its checksum binds neither the operation nor the
    // amount): it brings the status query forward, and the status reply naming the capture decides.
    await producer.callback(
      callback(preauth.paymentId, 'approved', { transactionType: 'capture' }),
    );
    const withStatus = await collector.waitForRequests(preauth.paymentId, 3);
    // Asked about exactly that request (by-request-sn).
    expect(withStatus[2].value).toMatchObject({
      operation: 'status',
      subjectRequestId: requests[1].value.requestId,
      subjectSerial: `sn-${requests[1].value.requestId}`,
    });
    expect(types(collector.events(preauth.paymentId))).not.toContain('captured');
    await producer.result({
      requestId: withStatus[2].value.requestId,
      paymentId: preauth.paymentId,
      operation: 'status',
      subjectRequestId: requests[1].value.requestId,
      attempt: 1,
      result: {
        kind: 'accepted',
        report: {
          status: 'approved',
          transactionType: 'capture',
          requestSerial: `sn-${requests[1].value.requestId}`,
        },
      },
      completedAt: T(),
    });
    const events = await collector.waitForEvents(preauth.paymentId, 7);
    expect(types(events).slice(4)).toEqual([
      'operation-requested',
      'accepted-by-gateway',
      'captured',
    ]);
    expect(versions(events)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    const { body } = await getPayment(preauth.paymentId);
    expect(body).toMatchObject({
      status: 'captured',
      amounts: { authorized: 10_000, captured: 4_000, returned: 0, currency: 'EUR' },
    });
  });

  it("two returns of one amount: the second's callback, the same parameters as the first's (one notificationId), still brings its status query forward", async () => {
    const { paymentId } = await saleInProcessing();
    await producer.callback(callback(paymentId, 'approved'));
    await collector.waitForEvents(paymentId, 3);
    const sameCallback = callback(paymentId, 'approved', {
      transactionType: 'reversal',
      amount: { minor: 1_000, currency: 'EUR' },
    });
    const refund = async () => {
      const before = collector.requests(paymentId).length;
      await producer.command({
        type: 'return',
        commandId: randomUUID(),
        paymentId,
        merchant: { endpointId: '1234' },
        occurredAt: T(),
        amount: { minor: 1_000, currency: 'EUR' },
      });
      const requests = await collector.waitForRequests(paymentId, before + 1);
      const request = requests[before].value;
      expect(request.operation).toBe('return');
      await producer.result(accepted(request));
      // The gateway's callback names the order, the type, the status and the amount: the same
      // parameters for both returns, so callback-ingest gives both one notificationId.
      await producer.callback(sameCallback);
      // The hint's query: urgent, about this return (a poll of its own would be routine).
      const status = await waitFor(
        () =>
          collector
            .requests(paymentId)
            .map((r) => r.value)
            .find(
              (r) =>
                r.operation === 'status' &&
                r.subjectRequestId === request.requestId &&
                r.priority === 'urgent',
            ),
        `the hinted status query about return ${request.requestId}`,
      );
      await producer.result({
        requestId: status.requestId,
        paymentId,
        operation: 'status',
        subjectRequestId: request.requestId,
        attempt: 1,
        result: {
          kind: 'accepted',
          report: {
            status: 'approved',
            transactionType: 'reversal',
            requestSerial: `sn-${request.requestId}`,
            amount: { minor: 1_000, currency: 'EUR' },
          },
        },
        completedAt: T(),
      });
    };
    await refund();
    await collector.waitForEvents(paymentId, 6);
    // Without the saga's version in the callback's inbox key the second callback is dropped as a
    // repeat of the first: no status query until the return's routine poll, seconds later.
    await refund();
    const events = await collector.waitForEvents(paymentId, 9);
    expect(types(events).filter((t) => t === 'returned')).toHaveLength(2);
  });

  it('resends the original request (same requestId, sealed card, attempt 2) after a not-sent result', async () => {
    const command = newSale();
    await producer.command(command);
    const [first] = await collector.waitForRequests(command.paymentId, 1);
    await producer.result({
      ...accepted(first.value),
      result: { kind: 'not-sent', reason: 'circuit open' },
    });
    const [, resent] = await collector.waitForRequests(command.paymentId, 2);
    expect(resent.value).toEqual({ ...first.value, attempt: 2 });
    expect(resent.headers.ce_id).not.toBe(first.headers.ce_id);
    // Nothing happened to the payment: no event for a request that never left.
    expect(types(collector.events(command.paymentId))).toEqual(['operation-requested']);
  });

  it('voids an authorization whose hold expired (HOLD_EXPIRY_SECONDS, action void)', async () => {
    const preauth = newSale({ type: 'preauth' });
    await producer.command({ ...preauth, type: 'preauth' });
    const [request] = await collector.waitForRequests(preauth.paymentId, 1);
    await producer.result(accepted(request.value));
    await producer.callback(
      callback(preauth.paymentId, 'approved', { transactionType: 'preauth' }),
    );
    await collector.waitForEvents(preauth.paymentId, 3);
    orchestrator.clock.offsetMs = 2 * 60 * 60 * 1000; // past the configured hour
    try {
      const events = await collector.waitForEvents(preauth.paymentId, 5, 20_000);
      expect(events.slice(3).map((e) => e.value)).toEqual([
        expect.objectContaining({ type: 'hold-expired', action: 'void', version: 4 }),
        expect.objectContaining({ type: 'operation-requested', operation: 'void', version: 5 }),
      ]);
      const requests = await collector.waitForRequests(preauth.paymentId, 2);
      expect(requests[1].value).toMatchObject({
        operation: 'void',
        gatewayOrderId: `gw-${preauth.paymentId.slice(0, 8)}`,
      });
    } finally {
      orchestrator.clock.offsetMs = 0;
    }
  });

  it('lets a duplicated or late callback change nothing once final', async () => {
    const { paymentId } = await saleInProcessing();
    const approved = callback(paymentId, 'approved');
    await producer.callback(approved);
    await collector.waitForEvents(paymentId, 3);
    await producer.callback(approved); // redelivered: the same notificationId
    const late = callback(paymentId, 'declined'); // a reordered, contradicting one
    await producer.callback(late);
    await waitFor(async () => {
      const rows = await query(`SELECT 1 FROM inbox WHERE message_id LIKE $1`, [
        `${late.notificationId}@%`,
      ]);
      return rows.length === 1;
    }, 'the late callback to be processed');
    // Keyed by the notification at the saga's version: the first at version 2 (settled it), the
    // redelivery at version 3 (decided again, changed nothing).
    const inbox = await query<{ message_id: string }>(
      `SELECT message_id FROM inbox WHERE message_id LIKE $1 ORDER BY message_id`,
      [`${approved.notificationId}@%`],
    );
    expect(inbox.map((r) => r.message_id)).toEqual([
      `${approved.notificationId}@v2`,
      `${approved.notificationId}@v3`,
    ]);
    const history = await query<{ version: number }>(
      `SELECT version FROM saga_history WHERE saga_id = $1 ORDER BY version`,
      [paymentId],
    );
    expect(history.map((h) => h.version)).toEqual([1, 2, 3]);
    expect((await getPayment(paymentId)).body.status).toBe('approved');
  });

  it('rate-limits status-check hints to one status refresh per payment per minute', async () => {
    const { paymentId } = await saleInProcessing();
    const hint = () => ({
      kind: 'status-check-hint',
      notificationId: randomUUID(),
      paymentId,
      reason: 'checksum-mismatch',
      receivedAt: T(),
    });
    const first = hint();
    await producer.callback(first);
    await waitFor(
      async () =>
        (await query(`SELECT 1 FROM inbox WHERE message_id LIKE $1`, [`${first.notificationId}@%`]))
          .length === 1,
      'first hint',
    );
    const [{ last_hint_at: firstAt }] = await query<{ last_hint_at: Date }>(
      `SELECT last_hint_at FROM sagas WHERE id = $1`,
      [paymentId],
    );
    expect(firstAt).toBeInstanceOf(Date);
    const second = hint();
    await producer.callback(second);
    await waitFor(
      async () =>
        (
          await query(`SELECT 1 FROM inbox WHERE message_id LIKE $1`, [
            `${second.notificationId}@%`,
          ])
        ).length === 1,
      'second hint',
    );
    const [{ last_hint_at: secondAt }] = await query<{ last_hint_at: Date }>(
      `SELECT last_hint_at FROM sagas WHERE id = $1`,
      [paymentId],
    );
    expect(secondAt.getTime()).toBe(firstAt.getTime());
  });
});
