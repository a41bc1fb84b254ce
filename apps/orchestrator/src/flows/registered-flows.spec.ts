import { loadConfig } from '@payments/config';
import { PaymentEvent, PayoutEvent, ScheduleEvent, TransferEvent } from '@payments/contracts';
import { orchestratorConfigShape } from '../config';
import type { FlowModule } from './flow-module';
import { FLOW_MODULES, registeredFlows } from './registered-flows';

const config = loadConfig('orchestrator', orchestratorConfigShape, {});

/** The flows whose events say money moved and that reconciliation does not check. */
function unreconciledMoneyFlows(modules: readonly FlowModule[]): string[] {
  return modules
    .filter((m) => m.moneyEvents.length > 0 && m.reconciliation === 'moves-no-money')
    .map((m) => m.name);
}

describe('the flow registry', () => {
  it('hosts each flow once, under its module name', () => {
    const names = registeredFlows(config).map((flow) => flow.name);
    expect(names).toEqual(FLOW_MODULES.map((module) => module.name));
    expect(new Set(names).size).toBe(names.length);
  });

  it('hands the runtime each flow with the money events of its module', () => {
    for (const flow of registeredFlows(config)) {
      const module = FLOW_MODULES.find((m) => m.name === flow.name);
      expect({ flow: flow.name, money: flow.moneyEvents }).toEqual({
        flow: flow.name,
        money: module?.moneyEvents,
      });
    }
  });

  it('reconciles every flow whose events say money moved', () => {
    expect(unreconciledMoneyFlows(FLOW_MODULES)).toEqual([]);
  });

  it('refuses a money-moving flow module that says it moves no money', () => {
    const careless: FlowModule = {
      name: 'careless',
      flow: () => {
        throw new Error('not hosted');
      },
      reconciliation: 'moves-no-money',
      moneyEvents: ['paid-out'],
    };
    expect(unreconciledMoneyFlows([...FLOW_MODULES, careless])).toEqual(['careless']);
  });

  it('names as money events only events its flow writes that carry an amount', () => {
    const written: Record<string, readonly string[]> = {
      'card-payment': PaymentEvent.options.map((o) => o.shape.type.value),
      payout: PayoutEvent.options.map((o) => o.shape.type.value),
      transfer: TransferEvent.options.map((o) => o.shape.type.value),
      'recurring-schedule': ScheduleEvent.options.map((o) => o.shape.type.value),
    };
    for (const module of FLOW_MODULES) {
      const stray = module.moneyEvents.filter(
        (type) => !(written[module.name] ?? []).includes(type),
      );
      expect({ flow: module.name, stray }).toEqual({ flow: module.name, stray: [] });
    }
  });
});
