import { OPERATIONS } from '@payments/payment-gateway/catalogue';
import { COMMAND_TYPES, type CommandType } from './commands';
import { parseCommand } from './parse-command';
import {
  COMMAND_GATEWAY_FIELDS,
  gatewayMappingProblems,
  gatewayRequirements,
} from './gateway-requirements';
import {
  PAYMENT_ID,
  captureCommand,
  preauthCommand,
  returnCommand,
  saleCommand,
  testUuid,
  voidCommand,
} from '../test/testing';

/** A valid command of each type (amounts set so optional money paths exist). */
const VALID: Record<CommandType, () => Record<string, unknown>> = {
  sale: () => saleCommand(),
  preauth: () => preauthCommand(),
  capture: () => captureCommand({ amount: { minor: 500, currency: 'EUR' } }),
  void: () => voidCommand({ comment: 'customer cancelled' }),
  return: () => returnCommand({ amount: { minor: 500, currency: 'EUR' }, comment: 'r' }),
  'refresh-status': () => ({
    ...captureCommand(),
    type: 'refresh-status',
    commandId: testUuid(),
    paymentId: PAYMENT_ID,
  }),
  'sale-form': () => hosted('sale-form'),
  'preauth-form': () => hosted('preauth-form'),
  'payment-form': () => hosted('payment-form'),
  'account-verification': () => verification('account-verification', true),
  'account-verification-form': () => verification('account-verification-form', false),
  'upload-method-url-result': () => ({
    ...reference('upload-method-url-result'),
    threeDSCompInd: 'N',
  }),
  'upload-cres-result': () => ({ ...reference('upload-cres-result'), cRes: 'eyJ9' }),
  'upload-pares-result': () => ({ ...reference('upload-pares-result'), paRes: 'PFBBUmVzPg==' }),
};

/** A hosted-form command: the sale's fields without the card. */
function hosted(type: string): Record<string, unknown> {
  const { sealedCard: _card, ...rest } = saleCommand();
  return { ...rest, type, commandId: testUuid() };
}

function verification(type: string, withCard: boolean): Record<string, unknown> {
  const { amount: _amount, order, sealedCard, ...rest } = saleCommand();
  return {
    ...rest,
    type,
    commandId: testUuid(),
    order: { description: order.description },
    ...(withCard ? { sealedCard } : {}),
  };
}

function reference(type: string): Record<string, unknown> {
  const { type: _t, ...base } = captureCommand();
  return { ...base, type, commandId: testUuid(), paymentId: PAYMENT_ID };
}

function without(command: Record<string, unknown>, path: readonly string[]) {
  const copy = structuredClone(command);
  let node: Record<string, unknown> = copy;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string, unknown>;
  delete node[path[path.length - 1] ?? ''];
  return copy;
}

describe('gateway requirements of commands', () => {
  it('every gateway field the catalogue requires has a source, and every source a field', () => {
    expect(COMMAND_TYPES.flatMap((type) => gatewayMappingProblems(type))).toEqual([]);
  });

  it('the valid test commands parse (the baseline the cases below remove a field from)', () => {
    expect(COMMAND_TYPES.map((type) => parseCommand(VALID[type]()).ok)).toEqual(
      COMMAND_TYPES.map(() => true),
    );
  });

  const cases = COMMAND_TYPES.flatMap((type) =>
    gatewayRequirements(type).map((r) => [type, r.path.join('.'), r] as const),
  );
  it.each(cases)('%s without %s → SCHEMA_INVALID naming the gateway field', (type, _p, r) => {
    const result = parseCommand(without(VALID[type](), r.path));
    expect(result.ok ? 'accepted' : result.reason).toBe('SCHEMA_INVALID');
    if (result.ok) return;
    expect(result.details).toContainEqual({
      path: ['$', ...r.path].join('.'),
      message: `required: the gateway operation ${r.operation} requires ${r.fields.join(', ')}`,
    });
  });

  it.each(['sale', 'preauth'] as const)(
    '%s without customer.phone is rejected at once (the catalogue requires phone)',
    (type) => {
      expect(OPERATIONS[COMMAND_GATEWAY_FIELDS[type].operation].fields.phone.required).toBe(true);
      const result = parseCommand(without(VALID[type](), ['customer', 'phone']));
      expect(result.ok ? 'accepted' : result.reason).toBe('SCHEMA_INVALID');
      expect(result.ok ? [] : result.details.map((d) => d.path)).toEqual(['$.customer.phone']);
    },
  );

  it('a field the gateway does not require stays optional (void comment, partial amounts)', () => {
    const optional: [CommandType, string[]][] = [
      ['void', ['comment']],
      ['capture', ['amount']],
      ['return', ['amount']],
      ['sale', ['customer', 'firstName']],
    ];
    expect(optional.map(([type, path]) => parseCommand(without(VALID[type](), path)).ok)).toEqual(
      optional.map(() => true),
    );
  });
});
