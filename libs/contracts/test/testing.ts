import type {
  CaptureCommand,
  PaymentCommand,
  ReturnCommand,
  SaleCommand,
  VoidCommand,
} from '../src/commands';
import type { CreateScheduleCommand, RebillCommand } from '../src/schedules';

/**
 * Test-data factories for commands (not exported from the package index; import
 * `@payments/contracts/testing`). The sealed card is a well-formed placeholder: nothing here opens it.
 */
export const PAYMENT_ID = '0f8b8c1e-4d4a-4c4e-9a53-6f1f0c2d3e4a';
export const MERCHANT = { endpointId: '1234' } as const;
export const PLACEHOLDER_SEALED_CARD =
  'v1..d3JhcHBlZA.aXZpdml2aXZpdml2.Y2lwaGVy.dGFndGFndGFndGFndGFn';

let counter = 0;
/** Deterministic distinct UUIDs for tests. */
export function testUuid(n = ++counter): string {
  const hex = n.toString(16).padStart(12, '0');
  return `00000000-0000-4000-8000-${hex}`;
}

export function saleCommand(overrides: Partial<SaleCommand> = {}): SaleCommand {
  return {
    type: 'sale',
    commandId: testUuid(),
    paymentId: PAYMENT_ID,
    merchant: { ...MERCHANT },
    occurredAt: '2025-03-01T10:00:00.000Z',
    amount: { minor: 10_000, currency: 'EUR' },
    order: { description: 'Order #42' },
    customer: { email: 'jane@example.com', ipAddress: '203.0.113.7', phone: '+4930123456' },
    billingAddress: { address1: '1 Main St', city: 'Berlin', zipCode: '10115', country: 'DE' },
    redirectUrl: 'https://shop.example.com/return',
    sealedCard: PLACEHOLDER_SEALED_CARD,
    ...overrides,
  };
}

export function preauthCommand(overrides: Partial<SaleCommand> = {}): PaymentCommand {
  return { ...saleCommand(overrides), type: 'preauth' };
}

export function captureCommand(overrides: Partial<CaptureCommand> = {}): CaptureCommand {
  return {
    type: 'capture',
    commandId: testUuid(),
    paymentId: PAYMENT_ID,
    merchant: { ...MERCHANT },
    occurredAt: '2025-03-01T10:05:00.000Z',
    ...overrides,
  };
}

export function voidCommand(overrides: Partial<VoidCommand> = {}): VoidCommand {
  return { ...captureCommand(), type: 'void', ...overrides };
}

export function returnCommand(overrides: Partial<ReturnCommand> = {}): ReturnCommand {
  return { ...captureCommand(), type: 'return', ...overrides };
}

export const SCHEDULE_ID = '5c3a9e2b-7f1d-4b8e-9c6a-2d4f8e1b3a70';

/** A monthly schedule on the 31st, 12 cycles, in Europe/Berlin (recurring schedules). */
export function createScheduleCommand(
  overrides: Partial<CreateScheduleCommand> = {},
): CreateScheduleCommand {
  return {
    type: 'create-schedule',
    commandId: testUuid(),
    scheduleId: SCHEDULE_ID,
    merchant: { ...MERCHANT },
    occurredAt: '2026-01-01T00:00:00.000Z',
    cardRef: { refId: 'card-ref-1' },
    amount: { minor: 999, currency: 'EUR' },
    description: 'Monthly plan',
    rule: {
      period: 'month',
      interval: 1,
      startDate: '2026-01-31',
      timeOfDay: '09:00',
      timeZone: 'Europe/Berlin',
      end: { kind: 'count', count: 12 },
    },
    ...overrides,
  };
}

/** A rebill of card reference `10901`; `schedule` when a schedule cycle charges it. */
export function rebillCommand(overrides: Partial<RebillCommand> = {}): RebillCommand {
  return {
    type: 'rebill',
    commandId: testUuid(),
    paymentId: PAYMENT_ID,
    merchant: { ...MERCHANT },
    occurredAt: '2025-03-01T10:00:00.000Z',
    cardRef: { refId: '10901' },
    amount: { minor: 1_500, currency: 'EUR' },
    order: { description: 'Monthly plan' },
    ...overrides,
  };
}
