/** The payouts' chaos companion: one-step (v2, v4), two-step with approval or expiry, payout forms. */
import { PAYOUT_FAMILY } from '@payments/contracts';
import { approvePayout, oneStepPayout, payoutCheck, payoutForm } from '../../stack/payout-commands';
import { SANDBOX_MERCHANT } from '../../stack/sandbox-config';
import { chaosCompanion } from './companion';

const payoutOf = (c: { saga: string; amountMinor: number }) => ({
  payoutId: c.saga,
  amountMinor: c.amountMinor,
});

export const payoutCompanion = chaosCompanion(PAYOUT_FAMILY, {
  family: PAYOUT_FAMILY.name,
  scenarios: [
    { name: 'payout (v2)', weight: 4, steps: [{ type: 'payout' }] },
    { name: 'payout (v4)', weight: 4, steps: [{ type: 'payout-v4' }] },
    {
      name: 'payout-check → approve → pay',
      weight: 5,
      steps: [{ type: 'payout-check' }, { type: 'approve-payout' }],
    },
    {
      name: 'payout-check, left to expire',
      weight: 2,
      steps: [{ type: 'payout-check', until: ['payout-expired'] }],
    },
    {
      name: 'payout form, payee completes',
      weight: 3,
      guaranteed: true,
      steps: [{ type: 'payout-form', payer: 'payee' }],
    },
  ],
  commands: {
    payout: {
      build: (c) => oneStepPayout({ ...payoutOf(c), type: 'payout' }),
      success: 'paid-out',
      once: 'paid-out',
    },
    'payout-v4': {
      build: (c) => oneStepPayout({ ...payoutOf(c), type: 'payout-v4' }),
      success: 'paid-out',
      once: 'paid-out',
    },
    'payout-check': { build: (c) => payoutCheck(payoutOf(c)), success: 'payout-registered' },
    'approve-payout': {
      build: (c) => approvePayout(c.saga),
      success: 'paid-out',
      once: 'paid-out',
    },
    'payout-form': {
      build: (c) =>
        payoutForm({
          ...payoutOf(c),
          redirectUrl: `${c.stack.urls['callback-ingest']}/return/${SANDBOX_MERCHANT.plainEndpoint}`,
        }),
      success: 'paid-out',
      once: 'paid-out',
    },
  },
  events: {
    'payout-requested': { role: 'requested' },
    'payout-accepted-by-gateway': { role: 'none' },
    'payout-action-required': { role: 'none' },
    'payout-outcome-unknown': { role: 'unknown' },
    'payout-operation-resent': { role: 'resent' },
    // A decision of two people (a case): settles the request, but is no gateway evidence.
    'payout-settled-by-decision': { role: 'final' },
    'payout-case-reopened': { role: 'none' },
    'payout-registered': { role: 'final' },
    // Four eyes: the first of two approvals, recorded; nothing is sent until the second.
    'payout-approval-recorded': { role: 'none' },
    'payout-approved': { role: 'none' },
    'payout-approval-refused': { role: 'none' },
    // The daily budget refused the request after it was requested: never sent, nothing moved.
    'payout-refused': { role: 'refused-before-sending', endsScenario: true },
    'payout-rejected': { role: 'none', endsScenario: true },
    // An approval refused by the daily limit leaves the payout awaiting approval, ended by expiry.
    'payout-expired': { role: 'none', endsScenario: true },
    'paid-out': { role: 'final', moves: (e) => [`paid-out ${e.amount.minor}`] },
    'payout-declined': { role: 'final', endsScenario: true },
    'payout-failed': { role: 'final', endsScenario: true },
    'payout-command-rejected': { role: 'rejected', endsScenario: true },
  },
  mayMove: {
    payout: ['paid-out'],
    'payout-v4': ['paid-out'],
    'payout-form': ['paid-out'],
    'payout-pay': ['paid-out'],
    'payout-check': [],
  },
  moneyOut: ['paid-out'],
  awaits: {
    after: 'payout-registered',
    endedBy: ['paid-out', 'payout-declined', 'payout-failed', 'payout-expired', 'payout-rejected'],
  },
});
