import {
  CE_SOURCES,
  ceType,
  fromKafkaHeaders,
  toKafkaHeaders,
  type CloudEventEnvelope,
} from './cloudevents';
import {
  childTraceparent,
  isValidTraceparent,
  newTraceparent,
  parseTraceparent,
} from './traceparent';

const TP = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const envelope: CloudEventEnvelope = {
  id: 'outbox-000123',
  type: ceType.event('approved'),
  source: CE_SOURCES.orchestrator,
  subject: '0f8b8c1e-4d4a-4c4e-9a53-6f1f0c2d3e4a',
  time: '2025-03-01T10:00:00.000Z',
  traceparent: TP,
};

describe('CloudEvents Kafka binding (binary mode)', () => {
  it('writes the ce_ headers, content-type and traceparent', () => {
    expect(toKafkaHeaders(envelope)).toEqual({
      ce_specversion: '1.0',
      ce_id: 'outbox-000123',
      ce_type: 'com.example.payments.payment.approved.v1',
      ce_source: '/payments/orchestrator',
      ce_subject: envelope.subject,
      ce_time: envelope.time,
      'content-type': 'application/json',
      traceparent: TP,
    });
  });

  it('round-trips through Buffer headers as kafkajs delivers them', () => {
    const raw = Object.fromEntries(
      Object.entries(toKafkaHeaders(envelope)).map(([k, v]) => [k, Buffer.from(v)]),
    );
    expect(fromKafkaHeaders(raw)).toEqual({ ok: true, envelope });
  });

  it('keeps ce_id stable: the same envelope gives the same id (redelivery dedupe)', () => {
    expect(toKafkaHeaders(envelope).ce_id).toBe(toKafkaHeaders({ ...envelope }).ce_id);
  });

  it('starts a trace when none is given', () => {
    const { traceparent: _omit, ...rest } = envelope;
    expect(isValidTraceparent(toKafkaHeaders(rest).traceparent)).toBe(true);
  });

  it('reports missing headers and a wrong specversion', () => {
    const headers = toKafkaHeaders(envelope);
    const { ce_id: _id, ...withoutId } = headers;
    expect(fromKafkaHeaders(withoutId)).toMatchObject({
      ok: false,
      reason: 'MISSING_HEADER',
      details: ['ce_id'],
    });
    expect(fromKafkaHeaders({ ...headers, ce_specversion: '0.3' })).toMatchObject({
      ok: false,
      reason: 'UNSUPPORTED_SPECVERSION',
    });
    expect(fromKafkaHeaders({ ...headers, 'content-type': 'text/plain' })).toMatchObject({
      ok: false,
      reason: 'UNSUPPORTED_CONTENT_TYPE',
    });
    expect(fromKafkaHeaders({ ...headers, ce_time: 'noon' })).toMatchObject({
      ok: false,
      reason: 'INVALID_HEADER',
    });
  });

  it('drops an invalid traceparent instead of refusing the message', () => {
    const r = fromKafkaHeaders({ ...toKafkaHeaders(envelope), traceparent: 'garbage' });
    expect(r.ok && r.envelope.traceparent).toBeUndefined();
  });
});

describe('traceparent', () => {
  it.each([
    [TP, true],
    ['00-00000000000000000000000000000000-00f067aa0ba902b7-01', false],
    ['00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01', false],
    ['ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', false],
    ['00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01', false],
    ['00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra', false],
    ['01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra', true],
  ])('valid(%s) = %s', (value, ok) => expect(isValidTraceparent(value)).toBe(ok));

  it('generates valid, distinct traceparents', () => {
    const a = newTraceparent();
    expect(isValidTraceparent(a)).toBe(true);
    expect(a).not.toBe(newTraceparent());
  });

  it('child keeps trace id and flags, changes the span id', () => {
    const child = parseTraceparent(childTraceparent(TP))!;
    const parent = parseTraceparent(TP)!;
    expect(child.traceId).toBe(parent.traceId);
    expect(child.flags).toBe(parent.flags);
    expect(child.parentId).not.toBe(parent.parentId);
  });

  it('child of nothing or garbage is a new root', () => {
    expect(isValidTraceparent(childTraceparent(undefined))).toBe(true);
    expect(isValidTraceparent(childTraceparent('nope'))).toBe(true);
  });
});
