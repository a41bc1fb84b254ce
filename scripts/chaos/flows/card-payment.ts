/**
 * The card payments' chaos companion: sales, preauths and their follow-ups, hosted card forms,
 * 3-D Secure with scripted payers, account verification, card references and rebills, and the
 * faults of issue #32 aimed at single payments.
 */
import { randomUUID } from 'node:crypto';
import { CARD_PAYMENT_FAMILY, type RebillCommand } from '@payments/contracts';
import { SANDBOX_MERCHANT } from '../../stack/sandbox-config';
import { chaosCompanion, type FaultTiming, type StepContext } from './companion';

const THREE_DS = SANDBOX_MERCHANT.threeDsEndpoint;

/**
 * A first send held past the no-trace window (the gateway processes it then) and the resend
 * refused 429 before processing: the orchestrator must not call the operation failed while its
 * first attempt may still move money (issue #32 item 1).
 */
const slowFirstSendResendRefused = (operation: string) => (t: FaultTiming) => [
  { operation, latencyMs: (t.neverReceivedSeconds * 3 + 15) * 1000, times: 1 },
  { operation, failBefore: 429, times: 1 },
];

/** A follow-up goes to the endpoint its payment was made on (else: MERCHANT_MISMATCH). */
const onEndpoint = <T extends { merchant: { endpointId: string } }>(
  c: StepContext,
  command: T,
): T =>
  c.endpointId === undefined ? command : { ...command, merchant: { endpointId: c.endpointId } };

export const cardPaymentCompanion = chaosCompanion(CARD_PAYMENT_FAMILY, {
  family: CARD_PAYMENT_FAMILY.name,
  scenarios: [
    { name: 'sale approved', weight: 28, steps: [{ type: 'sale', cvv: '123' }] },
    { name: 'sale declined', weight: 10, steps: [{ type: 'sale', cvv: '116' }] },
    { name: 'sale → void', weight: 6, steps: [{ type: 'sale', cvv: '123' }, { type: 'void' }] },
    {
      name: 'sale → return',
      weight: 5,
      steps: [{ type: 'sale', cvv: '123' }, { type: 'return' }],
    },
    {
      name: 'sale → partial return',
      weight: 5,
      steps: [
        { type: 'sale', cvv: '123' },
        { type: 'return', part: 0.4 },
      ],
    },
    { name: 'preauth declined', weight: 4, steps: [{ type: 'preauth', cvv: '209' }] },
    {
      name: 'preauth → capture',
      weight: 12,
      steps: [{ type: 'preauth', cvv: '123' }, { type: 'capture' }],
    },
    {
      name: 'preauth → partial capture',
      weight: 12,
      steps: [
        { type: 'preauth', cvv: '123' },
        { type: 'capture', part: 0.6 },
      ],
    },
    {
      name: 'preauth → void',
      weight: 9,
      steps: [{ type: 'preauth', cvv: '123' }, { type: 'void' }],
    },
    {
      name: 'preauth → capture → partial return',
      weight: 9,
      steps: [{ type: 'preauth', cvv: '123' }, { type: 'capture' }, { type: 'return', part: 0.5 }],
    },
    {
      name: 'sale → two partial returns',
      weight: 4,
      steps: [
        { type: 'sale', cvv: '123' },
        { type: 'return', part: 0.3 },
        { type: 'return', part: 0.3 },
      ],
    },
    {
      name: 'preauth → capture declined → capture',
      weight: 4,
      steps: [
        { type: 'preauth', cvv: '123' },
        {
          type: 'capture',
          faults: () => [{ operation: 'CAPTURE', outcome: 'declined', times: 1 }],
          until: ['declined'],
          ends: ['captured'],
        },
        { type: 'capture' },
      ],
    },
    {
      name: '3-D Secure sale, challenge passed',
      weight: 5,
      guaranteed: true,
      steps: [{ type: 'sale', cvv: '321', endpointId: THREE_DS, payer: 'pass' }],
    },
    {
      name: '3-D Secure sale, wrong password',
      weight: 2,
      guaranteed: true,
      steps: [
        {
          type: 'sale',
          cvv: '321',
          endpointId: THREE_DS,
          payer: 'wrong-password',
          until: ['declined'],
          ends: ['approved'],
        },
      ],
    },
    {
      name: '3-D Secure sale, challenge cancelled',
      weight: 2,
      guaranteed: true,
      steps: [
        {
          type: 'sale',
          cvv: '321',
          endpointId: THREE_DS,
          payer: 'cancel',
          until: ['declined'],
          ends: ['approved'],
        },
      ],
    },
    {
      // Nothing tells the service the payer left: it polls, and the ACS declines the sale once its
      // challenge window is over ("3-D Secure not completed in time"); the run moves the sandbox's
      // clock past that window when only these are left open.
      name: '3-D Secure sale, payer abandons',
      weight: 2,
      guaranteed: true,
      steps: [
        {
          type: 'sale',
          cvv: '321',
          endpointId: THREE_DS,
          payer: 'abandon',
          until: ['declined'],
          ends: ['approved'],
        },
      ],
    },
    {
      name: '3-D Secure preauth → capture',
      weight: 3,
      guaranteed: true,
      steps: [
        { type: 'preauth', cvv: '321', endpointId: THREE_DS, payer: 'pass' },
        { type: 'capture' },
      ],
    },
    {
      name: 'sale-form, payer fills the form',
      weight: 3,
      guaranteed: true,
      steps: [{ type: 'sale-form', payer: 'card-form' }],
    },
    {
      name: 'preauth-form → capture',
      weight: 2,
      guaranteed: true,
      steps: [{ type: 'preauth-form', payer: 'card-form' }, { type: 'capture' }],
    },
    {
      name: 'account verification',
      weight: 2,
      guaranteed: true,
      steps: [{ type: 'account-verification' }],
    },
    {
      name: 'sale → card ref → rebill → rebill declined',
      weight: 4,
      guaranteed: true,
      steps: [
        { type: 'sale', cvv: '123' },
        { type: 'create-card-ref' },
        { type: 'rebill' },
        {
          type: 'rebill',
          faults: () => [{ operation: 'REBILL', outcome: 'declined', times: 1 }],
          until: ['declined'],
          ends: ['approved'],
        },
      ],
    },
    {
      name: 'sale, first send slower than no-trace, resend refused',
      weight: 1,
      guaranteed: true,
      steps: [{ type: 'sale', cvv: '123', faults: slowFirstSendResendRefused('SALE') }],
    },
    {
      name: 'preauth → capture slower than no-trace, resend refused',
      weight: 1,
      guaranteed: true,
      steps: [
        { type: 'preauth', cvv: '123' },
        { type: 'capture', faults: slowFirstSendResendRefused('CAPTURE') },
      ],
    },
    {
      // Two operations of one saga waiting in back-off at once (issue #32 item 2).
      name: 'preauth → capture and card ref both held back',
      weight: 1,
      guaranteed: true,
      steps: [
        { type: 'preauth', cvv: '123' },
        {
          type: 'capture',
          faults: () => [
            { operation: 'CAPTURE', failBefore: 429, times: 2 },
            { operation: 'CARDREF', failBefore: 429, times: 1 },
          ],
          alongside: { type: 'create-card-ref' },
        },
      ],
    },
  ],
  commands: {
    sale: {
      build: (c) =>
        c.stack.sale({
          paymentId: c.saga,
          cvv: c.step.cvv,
          amountMinor: c.amountMinor,
          endpointId: c.step.endpointId,
        }),
      success: 'approved',
      once: 'charged',
    },
    preauth: {
      build: (c) =>
        c.stack.preauth({
          paymentId: c.saga,
          cvv: c.step.cvv,
          amountMinor: c.amountMinor,
          endpointId: c.step.endpointId,
        }),
      success: 'authorized',
      once: 'authorized',
    },
    'sale-form': {
      build: (c) =>
        c.stack.hostedForm('sale-form', { paymentId: c.saga, amountMinor: c.amountMinor }),
      success: 'approved',
      once: 'charged',
    },
    'preauth-form': {
      build: (c) =>
        c.stack.hostedForm('preauth-form', { paymentId: c.saga, amountMinor: c.amountMinor }),
      success: 'authorized',
      once: 'authorized',
    },
    'account-verification': {
      build: (c) => c.stack.accountVerification({ paymentId: c.saga }),
      success: 'account-verified',
    },
    capture: {
      build: (c) => onEndpoint(c, c.stack.capture(c.saga, c.partMinor)),
      success: 'captured',
      once: 'captured',
    },
    void: { build: (c) => onEndpoint(c, c.stack.void(c.saga)), success: 'voided' },
    return: {
      build: (c) => onEndpoint(c, c.stack.return(c.saga, c.partMinor)),
      success: 'returned',
      once: 'refunded',
    },
    'create-card-ref': {
      build: (c) => ({
        type: 'create-card-ref',
        commandId: randomUUID(),
        paymentId: c.saga,
        merchant: { endpointId: SANDBOX_MERCHANT.plainEndpoint },
        occurredAt: new Date().toISOString(),
      }),
      success: 'card-ref-created',
    },
    rebill: {
      build: (c) => {
        const rebill: RebillCommand = {
          type: 'rebill',
          commandId: randomUUID(),
          // A saga of its own, drawn from the seed like every other: same seed, same faults.
          paymentId: c.saga,
          merchant: { endpointId: SANDBOX_MERCHANT.plainEndpoint },
          occurredAt: new Date().toISOString(),
          cardRef: { refId: c.cardRefId ?? '' },
          amount: { minor: c.partMinor ?? c.amountMinor, currency: 'USD' },
          order: { description: 'Rebill by card reference' },
        };
        return rebill;
      },
      success: 'approved',
      once: 'charged',
      ownSaga: true,
      namesCardRef: true,
    },
  },
  events: {
    'operation-requested': { role: 'requested' },
    'accepted-by-gateway': { role: 'none' },
    'action-required': { role: 'none' },
    'outcome-unknown': { role: 'unknown' },
    'operation-resent': { role: 'resent' },
    // A decision of two people (a case) settles the request, but is no gateway evidence: it says
    // nothing moved in the ledger; a contradicting answer later only reopens the case.
    'settled-by-decision': { role: 'final' },
    'case-reopened': { role: 'none' },
    approved: { role: 'final', moves: (e) => [`charged ${e.amount.minor}`] },
    authorized: {
      role: 'final',
      moves: (e, state) => {
        state.holdOpen = true;
        return [`authorized ${e.amount.minor}`];
      },
    },
    'account-verified': { role: 'final' },
    declined: { role: 'final', endsScenario: true },
    failed: { role: 'final', endsScenario: true },
    captured: {
      role: 'final',
      moves: (e, state) => {
        state.holdOpen = false;
        return [
          `captured ${e.amount.minor}`,
          ...(e.released.minor > 0 ? [`released ${e.released.minor}`] : []),
        ];
      },
    },
    voided: {
      role: 'final',
      moves: (e, state) => {
        const out = [`${state.holdOpen ? 'released' : 'voided'} ${e.amount.minor}`];
        state.holdOpen = false;
        return out;
      },
    },
    returned: {
      role: 'final',
      moves: (e, state) => {
        state.holdOpen = false;
        return [`${e.holdReleased ? 'released' : 'refunded'} ${e.amount.minor}`];
      },
    },
    'hold-expired': { role: 'none' },
    'command-rejected': { role: 'rejected', endsScenario: true },
    // A card reference moves no money, but a request for one still open leaves its saga unsettled.
    'card-ref-requested': { role: 'requested' },
    'card-ref-created': { role: 'final' },
    'card-info-requested': { role: 'none' },
    'card-info-reported': { role: 'none' },
    'card-reference-unknown': { role: 'unknown' },
    'card-reference-failed': { role: 'final', endsScenario: true },
  },
  mayMove: {
    sale: ['charged'],
    rebill: ['charged'],
    preauth: ['authorized'],
    capture: ['captured', 'released'],
    void: ['voided', 'released'],
    return: ['refunded', 'released'],
    'account-verification': [],
    'card-ref-requested': [],
  },
});
