import { createLogger, loggingOptions } from './logger';
import { currentCorrelationId, runWithCorrelationId } from './correlation';

function capture() {
  const lines: string[] = [];
  const destination = { write: (chunk: string) => void lines.push(chunk) };
  const logger = createLogger({
    service: 'test-svc',
    version: '1.2.3',
    level: 'debug',
    pretty: false,
    destination,
  });
  return { logger, lines, records: () => lines.map((l) => JSON.parse(l)) };
}

const PAN = '4111111111111111';
const AMEX = '378282246310005';
const GROUPED_PAN = '5555 5555 5555 4444';
const CVV = '837';
const CONTROL_KEY = 'B4F2-CONTROL-KEY-99AD-0E11';
const SIGNATURE = 'c2lnbmF0dXJlLXNlY3JldC12YWx1ZQ';
const OAUTH_SIGNATURE = 'tR3%2BTy81lMeYAr%2FFid0kMTYa%2FWM%3D';
const PEM_BODY = 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKB';
const PEM = `-----BEGIN PRIVATE KEY-----\n${PEM_BODY}\nUwhMPAqSDE3Zb3zV\n-----END PRIVATE KEY-----\n`;
const AUTH_HEADER = `OAuth oauth_consumer_key="merchant-7", oauth_signature="${OAUTH_SIGNATURE}"`;

describe('createLogger redaction', () => {
  it('keeps no card number, CVV, control key, private key, signature or authorization', () => {
    const { logger, lines, records } = capture();
    logger.info(
      {
        paymentId: 'pay_123',
        amount: { minor: 1050, currency: 'EUR' },
        pan: PAN,
        card: { credit_card_number: AMEX, cvv2: CVV, expire_month: '12', brand: 'visa' },
        deep: { a: { b: { c: { d: { cardNumber: PAN, note: `stored ${PAN}` } } } } },
        description: `customer typed ${PAN} in the comment and ${GROUPED_PAN} too`,
        controlKey: CONTROL_KEY,
        gateway: { merchant_control: CONTROL_KEY, signature: SIGNATURE },
        key: PEM,
        numeric: Number(PAN),
        req: { headers: { Authorization: AUTH_HEADER, 'content-type': 'application/json' } },
        headers: { authorization: AUTH_HEADER },
        list: [{ CVV: CVV }, `pan=${PAN}`],
      },
      'charging card %s with control %s',
      PAN,
      'visible-arg',
    );
    logger.warn(`free text with ${AMEX} and key ${PEM}`);
    logger.error({ err: new Error(`gateway echoed ${PAN}`) }, 'failed');
    logger.error({ err: new TypeError(`bad ${PAN}`) }, 'typed');

    const output = lines.join('');
    for (const secret of [
      PAN,
      AMEX,
      GROUPED_PAN,
      CONTROL_KEY,
      SIGNATURE,
      OAUTH_SIGNATURE,
      PEM_BODY,
      'BEGIN PRIVATE KEY',
      AUTH_HEADER,
      `"${CVV}"`,
    ]) {
      expect(output).not.toContain(secret);
    }
    // What may stay: BIN + last four, and everything that is not secret.
    expect(output).toContain('411111******1111');
    expect(output).toContain('378282******0005');
    expect(output).toContain('555555******4444');
    const [first, second, third, fourth] = records();
    expect(first.paymentId).toBe('pay_123');
    expect(first.amount).toEqual({ minor: 1050, currency: 'EUR' });
    expect(first.card.brand).toBe('visa');
    expect(first.card.cvv2).toBe('[REDACTED]');
    expect(first.card.expire_month).toBe('[REDACTED]');
    expect(first.req.headers['content-type']).toBe('application/json');
    expect(first.msg).toBe('charging card 411111******1111 with control visible-arg');
    expect(first.numeric).toBe('411111******1111');
    expect(first.deep.a.b.c.d.note).toBe('stored 411111******1111');
    expect(first.service).toBe('test-svc');
    expect(first.version).toBe('1.2.3');
    expect(first.level).toBe('info');
    expect(second.msg).toContain('378282******0005');
    expect(second.msg).toContain('[PRIVATE KEY REDACTED]');
    expect(third.err.message).toBe('gateway echoed 411111******1111');
    expect(third.err.type).toBe('Error');
    expect(fourth.err.type).toBe('TypeError');
    expect(third.err.stack).toContain('gateway echoed 411111******1111');
  });

  it("redacts a child logger's sensitive bindings and nested keys of a line at any depth", () => {
    const { logger, lines, records } = capture();
    logger.child({ control: CONTROL_KEY, component: 'x' }).info('bound');
    logger.info({
      req: { headers: { 'x-api-key': 'k-123456', 'user-agent': 'gw' } },
      a: { b: { c: { d: { e: { signature: SIGNATURE, merchant_control: CONTROL_KEY } } } } },
    });
    const output = lines.join('');
    for (const secret of [CONTROL_KEY, SIGNATURE, 'k-123456']) expect(output).not.toContain(secret);
    const [bound, nested] = records();
    expect(bound.control).toBe('[REDACTED]');
    expect(bound.component).toBe('x');
    expect(nested.req.headers['x-api-key']).toBe('[REDACTED]');
    expect(nested.req.headers['user-agent']).toBe('gw');
    expect(nested.a.b.c.d.e.signature).toBe('[REDACTED]');
  });

  it('leaves numbers that are not Luhn-valid card numbers alone', () => {
    const { logger, records } = capture();
    logger.info({ orderId: '4111111111111112', ts: 1700000000000, phone: '+49 1512 3456789' });
    const [line] = records();
    expect(line.orderId).toBe('4111111111111112');
    expect(line.ts).toBe(1700000000000);
    expect(line.phone).toBe('+49 1512 3456789');
  });
});

describe('correlation ids', () => {
  it('adds the id of the surrounding runWithCorrelationId to every line, across awaits', async () => {
    const { logger, records } = capture();
    logger.info('outside');
    await runWithCorrelationId('corr-42', async () => {
      logger.info('before await');
      await new Promise((resolve) => setTimeout(resolve, 5));
      expect(currentCorrelationId()).toBe('corr-42');
      logger.child({ component: 'x' }).info('after await');
    });
    expect(currentCorrelationId()).toBeUndefined();
    const [outside, before, after] = records();
    expect(outside.correlationId).toBeUndefined();
    expect(before.correlationId).toBe('corr-42');
    expect(after.correlationId).toBe('corr-42');
    expect(after.component).toBe('x');
  });
});

describe('loggingOptions', () => {
  it('maps an app configuration to the logger options', () => {
    expect(
      loggingOptions('orchestrator', {
        version: '1.2.3',
        log: { logLevel: 'debug', logPretty: true },
      }),
    ).toEqual({ service: 'orchestrator', version: '1.2.3', level: 'debug', pretty: true });
  });
});
