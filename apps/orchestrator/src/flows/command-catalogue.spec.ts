import { createScheduleCommand, saleCommand } from '@payments/contracts/testing';
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
});
