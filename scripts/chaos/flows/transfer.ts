/** The transfers' chaos companion: a transfer with a sealed card, and one by card reference. */
import { TRANSFER_FAMILY } from '@payments/contracts';
import { transfer, transferByRef } from '../../stack/payout-commands';
import { chaosCompanion } from './companion';

export const transferCompanion = chaosCompanion(TRANSFER_FAMILY, {
  family: TRANSFER_FAMILY.name,
  scenarios: [
    { name: 'transfer', weight: 5, steps: [{ type: 'transfer', cvv: '123' }] },
    { name: 'transfer-by-ref', weight: 3, guaranteed: true, steps: [{ type: 'transfer-by-ref' }] },
  ],
  commands: {
    transfer: {
      build: (c) => transfer({ payoutId: c.saga, amountMinor: c.amountMinor, cvv: c.step.cvv }),
      success: 'transferred',
      once: 'transferred',
    },
    'transfer-by-ref': {
      build: (c) => transferByRef({ payoutId: c.saga, amountMinor: c.amountMinor }),
      success: 'transferred',
      once: 'transferred',
    },
  },
  events: {
    'transfer-requested': { role: 'requested' },
    'transfer-accepted-by-gateway': { role: 'none' },
    'transfer-outcome-unknown': { role: 'unknown' },
    'transfer-operation-resent': { role: 'resent' },
    // A decision of two people (a case): settles the request, but is no gateway evidence.
    'transfer-settled-by-decision': { role: 'final' },
    'transfer-case-reopened': { role: 'none' },
    transferred: { role: 'final', moves: (e) => [`transferred ${e.amount.minor}`] },
    'transfer-declined': { role: 'final', endsScenario: true },
    'transfer-failed': { role: 'final', endsScenario: true },
    'transfer-refused': { role: 'refused-before-sending', endsScenario: true },
    'transfer-command-rejected': { role: 'rejected', endsScenario: true },
  },
  mayMove: { transfer: ['transferred'], 'transfer-by-ref': ['transferred'] },
  moneyOut: ['transferred'],
});
