import { PAN_ELIGIBILITY_FAMILY } from '@payments/contracts';
import type { FlowModule } from '../flow-module';
import { payoutPolicy } from '../payout/policy';
import { PAN_ELIGIBILITY_FLOW, panEligibilityFlow } from './pan-eligibility.flow';

/** Whether a card (by its gateway reference) can receive a payout. */
export const panEligibilityModule: FlowModule = {
  name: PAN_ELIGIBILITY_FLOW,
  family: PAN_ELIGIBILITY_FAMILY,
  flow: (config) => panEligibilityFlow(payoutPolicy(config)),
  // The gateway answers a question; nothing moves.
  reconciliation: 'moves-no-money',
  moneyEvents: [],
};
