import { createScheduleCommand, rebillCommand, saleCommand } from '@payments/contracts/testing';
import { contractCommands } from './command-catalogue';

describe('contract command catalogue: routing', () => {
  it('addresses a card-payment command by its paymentId (unchanged)', () => {
    const sale = saleCommand();
    const parsed = contractCommands.parse(sale);
    expect(parsed.ok && parsed.command.sagaId).toBe(sale.paymentId);
  });

  it('addresses a schedule command by its scheduleId', () => {
    const create = createScheduleCommand();
    const parsed = contractCommands.parse(create);
    expect(parsed.ok && parsed.command).toMatchObject({
      type: 'create-schedule',
      sagaId: create.scheduleId,
      endpointId: create.merchant.endpointId,
    });
  });

  it('an invalid schedule command is still addressed to its schedule (for its rejection)', () => {
    const create = { ...createScheduleCommand(), amount: { minor: 1.5, currency: 'EUR' } };
    const parsed = contractCommands.parse(create);
    expect(parsed.ok ? undefined : parsed.ids).toMatchObject({
      sagaId: create.scheduleId,
      commandId: create.commandId,
      type: 'create-schedule',
    });
  });

  it('addresses a rebill (a card-reference command) by its paymentId, on the same road', () => {
    const rebill = rebillCommand();
    const parsed = contractCommands.parse(rebill);
    expect(parsed.ok && parsed.command.sagaId).toBe(rebill.paymentId);
  });

  it("refuses a schedule's internal record-cycle-outcome from the topic, takes it from a saga", () => {
    const outcome = {
      type: 'record-cycle-outcome',
      commandId: '6a1e4a43-7f4c-4c55-9f1e-0b7a8f3d2c11',
      scheduleId: '5c3a9e2b-7f1d-4b8e-9c6a-2d4f8e1b3a70',
      merchant: { endpointId: '1234' },
      occurredAt: '2026-01-01T00:00:00.000Z',
      cycle: 1,
      attempt: 1,
      paymentId: '0f8b8c1e-4d4a-4c4e-9a53-6f1f0c2d3e4a',
      outcome: 'approved',
    };
    const fromTopic = contractCommands.parse(outcome, 'topic');
    expect(fromTopic.ok ? undefined : fromTopic.reason).toBe('INTERNAL_COMMAND');
    const fromSaga = contractCommands.parse(outcome, 'saga');
    expect(fromSaga.ok && fromSaga.command.sagaId).toBe(outcome.scheduleId);
  });
});
