/**
 * PAN eligibility's chaos companion: a check of the card behind a card reference an earlier step
 * of the scenario made (a saga of its own, keyed by its checkId). No money moves.
 */
import { PAN_ELIGIBILITY_FAMILY } from '@payments/contracts';
import { panEligibility } from '../../stack/payout-commands';
import { chaosCompanion } from './companion';

export const panEligibilityCompanion = chaosCompanion(PAN_ELIGIBILITY_FAMILY, {
  family: PAN_ELIGIBILITY_FAMILY.name,
  scenarios: [
    {
      name: 'sale → card ref → PAN eligibility',
      weight: 2,
      guaranteed: true,
      steps: [
        { type: 'sale', cvv: '123' },
        { type: 'create-card-ref' },
        { type: 'pan-eligibility' },
      ],
    },
  ],
  commands: {
    'pan-eligibility': {
      build: (c) => ({ ...panEligibility(c.cardRefId ?? ''), checkId: c.saga }),
      success: 'pan-eligibility-answered',
      ownSaga: true,
    },
  },
  events: {
    'pan-eligibility-requested': { role: 'requested' },
    'pan-eligibility-accepted-by-gateway': { role: 'none' },
    'pan-eligibility-outcome-unknown': { role: 'unknown' },
    'pan-eligibility-operation-resent': { role: 'resent' },
    'pan-eligibility-answered': { role: 'final' },
    'pan-eligibility-failed': { role: 'final', endsScenario: true },
    'pan-eligibility-settled-by-decision': { role: 'final', endsScenario: true },
    'pan-eligibility-case-reopened': { role: 'none' },
    'pan-eligibility-command-rejected': { role: 'rejected', endsScenario: true },
  },
  mayMove: { 'pan-eligibility': [] },
});
