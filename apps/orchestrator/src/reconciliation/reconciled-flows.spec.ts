import { loadConfig } from '@payments/config';
import { orchestratorConfigShape } from '../config';
import { registeredFlows } from '../flows/registered-flows';
import { RECONCILED_FLOWS, RECONCILIATION } from './reconciled-flows';

const flows = registeredFlows(loadConfig('orchestrator', orchestratorConfigShape, {}));

describe('reconciliation covers every flow the orchestrator runs', () => {
  it('each registered flow is reconciled or declares that it moves no money', () => {
    const undeclared = flows
      .map((f) => f.name)
      .filter((name) => RECONCILIATION[name] === undefined);
    expect(undeclared).toEqual([]);
  });

  it('names no flow the orchestrator does not run (a stale entry hides a renamed flow)', () => {
    const running = new Set(flows.map((f) => f.name));
    expect(Object.keys(RECONCILIATION).filter((name) => !running.has(name))).toEqual([]);
  });

  it('the flows that move money are reconciled: card payments, payouts, transfers, schedules', () => {
    expect([...RECONCILED_FLOWS].sort()).toEqual(
      ['card-payment', 'payout', 'recurring-schedule', 'transfer'].sort(),
    );
  });
});
