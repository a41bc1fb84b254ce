/**
 * The chaos run's workload: the scenarios (one saga each, a chain of commands drawn by weight with
 * a seeded generator) and what ends them.
 */
import { randomUUID } from 'node:crypto';
import type {
  AnyTransferCommand,
  CardReferenceCommand,
  PaymentCommand,
  PayoutCommand,
  RebillCommand,
} from '@payments/contracts';
import { PaymentStack, SANDBOX_MERCHANT } from '../stack/payment-stack';
import {
  approvePayout,
  oneStepPayout,
  payoutCheck,
  payoutForm,
  transfer,
  transferByRef,
} from '../stack/payout-commands';
import { ChallengeAnswer } from '../stack/payer-http';
import { CommandType, SagaEvent } from './checks';
import type { ChaosReport } from './chaos-config';

/**
 * What the payer does at the page the saga's action-required names: the ACS challenge of a 3-D
 * Secure sale (pass, fail with a wrong password, cancel, or leave the page), or the hosted payout
 * form the payee fills in.
 */
export type PayerPlan = Exclude<ChallengeAnswer, 'hinted-password'> | 'pass' | 'payee';

/**
 * Workload: one scenario per saga (a card payment, a payout or a transfer), a chain of commands,
 * each after the previous succeeded; a rebill step starts a saga of its own on the card reference
 * an earlier step made.
 */
export interface Step {
  readonly type: CommandType;
  readonly cvv?: string;
  /** The merchant endpoint; the plain one (no 3-D Secure) when unset. */
  readonly endpointId?: string;
  /** A scripted payer (or payee) acts on the step's action-required page over HTTP. */
  readonly payer?: PayerPlan;
  /** The sandbox gives this operation of the step's saga a declined outcome once (e.g. REBILL). */
  readonly declinedOnce?: string;
  /** Fraction of the payment's amount (partial capture/return); whole when unset. */
  readonly part?: number;
  /** The events that let the next step go (or complete the scenario); default SUCCESS[type]. */
  readonly until?: readonly string[];
  /** Events that end the scenario early besides ENDS (the step went otherwise than planned). */
  readonly ends?: readonly string[];
  /** The sandbox declines this payment's next capture once (an `outcome` fault). */
  readonly captureDeclinedOnce?: boolean;
}

export const SCENARIOS: ReadonlyArray<{ name: string; weight: number; steps: Step[] }> = [
  { name: 'sale approved', weight: 28, steps: [{ type: 'sale', cvv: '123' }] },
  { name: 'sale declined', weight: 10, steps: [{ type: 'sale', cvv: '116' }] },
  { name: 'sale → void', weight: 6, steps: [{ type: 'sale', cvv: '123' }, { type: 'void' }] },
  { name: 'sale → return', weight: 5, steps: [{ type: 'sale', cvv: '123' }, { type: 'return' }] },
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
  { name: 'preauth → void', weight: 9, steps: [{ type: 'preauth', cvv: '123' }, { type: 'void' }] },
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
      { type: 'capture', captureDeclinedOnce: true, until: ['declined'], ends: ['captured'] },
      { type: 'capture' },
    ],
  },
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
  { name: 'transfer', weight: 5, steps: [{ type: 'transfer', cvv: '123' }] },
  {
    name: '3-D Secure sale, challenge passed',
    weight: 5,
    steps: [
      { type: 'sale', cvv: '321', endpointId: SANDBOX_MERCHANT.threeDsEndpoint, payer: 'pass' },
    ],
  },
  {
    name: '3-D Secure sale, wrong password',
    weight: 2,
    steps: [
      {
        type: 'sale',
        cvv: '321',
        endpointId: SANDBOX_MERCHANT.threeDsEndpoint,
        payer: 'wrong-password',
        until: ['declined'],
        ends: ['approved'],
      },
    ],
  },
  {
    name: '3-D Secure sale, challenge cancelled',
    weight: 2,
    steps: [
      {
        type: 'sale',
        cvv: '321',
        endpointId: SANDBOX_MERCHANT.threeDsEndpoint,
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
    steps: [
      {
        type: 'sale',
        cvv: '321',
        endpointId: SANDBOX_MERCHANT.threeDsEndpoint,
        payer: 'abandon',
        until: ['declined'],
        ends: ['approved'],
      },
    ],
  },
  {
    name: 'sale → card ref → rebill → rebill declined',
    weight: 4,
    steps: [
      { type: 'sale', cvv: '123' },
      { type: 'create-card-ref' },
      { type: 'rebill' },
      { type: 'rebill', declinedOnce: 'REBILL', until: ['declined'], ends: ['approved'] },
    ],
  },
  { name: 'transfer-by-ref', weight: 3, steps: [{ type: 'transfer-by-ref' }] },
  {
    name: 'payout form, payee completes',
    weight: 3,
    steps: [{ type: 'payout-form', payer: 'payee' }],
  },
];

/**
 * The scenarios every run starts first, one each, before the seeded draw: the flows a small run
 * might otherwise never draw.
 */
export const GUARANTEED_FIRST = [
  '3-D Secure sale, challenge passed',
  '3-D Secure sale, wrong password',
  '3-D Secure sale, challenge cancelled',
  '3-D Secure sale, payer abandons',
  'sale → card ref → rebill → rebill declined',
  'transfer-by-ref',
  'payout form, payee completes',
];

/** The event that lets a scenario's next step go: the previous step succeeded. */
export const SUCCESS: Record<CommandType, string> = {
  sale: 'approved',
  preauth: 'authorized',
  capture: 'captured',
  void: 'voided',
  return: 'returned',
  payout: 'paid-out',
  'payout-v4': 'paid-out',
  'payout-check': 'payout-registered',
  'approve-payout': 'paid-out',
  transfer: 'transferred',
  'create-card-ref': 'card-ref-created',
  rebill: 'approved',
  'transfer-by-ref': 'transferred',
  'payout-form': 'paid-out',
};

/**
 * Events after which a scenario sends nothing more: the step did not succeed, or the saga is
 * final otherwise (an approval refused by the daily limit leaves the payout awaiting approval,
 * which ends with `payout-expired`).
 */
export const ENDS = new Set<string>([
  'declined',
  'failed',
  'command-rejected',
  'payout-declined',
  'payout-failed',
  'payout-refused',
  'payout-rejected',
  'payout-expired',
  'payout-command-rejected',
  'transfer-declined',
  'transfer-failed',
  'transfer-refused',
  'transfer-command-rejected',
  'card-reference-failed',
]);

/** An unknown outcome raised for a person (no trace and no safe repeat): nothing more happens. */
export const ALERTED = new Set<string>([
  'outcome-unknown',
  'payout-outcome-unknown',
  'transfer-outcome-unknown',
  'card-reference-unknown',
]);

/** The sandbox's ACS challenge window (its challengeTimeoutMs), and a second past it. */
export const ACS_WINDOW_SECONDS = 601;

/** An open saga with no event for this long is stalled (awaits nothing the run will bring). */
export const STALLED_MS = 60_000;

export interface Scenario {
  readonly paymentId: string;
  readonly name: string;
  readonly steps: readonly Step[];
  readonly amountMinor: number;
  /** Index of the next step to send. */
  next: number;
  /** The next step may be sent (the previous one succeeded). */
  ready: boolean;
  /** Ended: every step sent and done, or a step did not succeed. */
  ended: boolean;
  /** The highest event version seen: a redelivered earlier event decides nothing again. */
  seenVersion: number;
  /** The saga the last step sent went to: the scenario's own, or a rebill's. */
  saga: string;
  /**
   * The rebill steps' saga ids, drawn with the scenario (a draw at send time would depend on
   * timing, and the seed would no longer give one workload), and how many were used.
   */
  readonly rebillSagas: readonly string[];
  rebills: number;
  /** The card reference an earlier step made (card-ref-created). */
  cardRefId?: string;
  /** The payer of the last step has been sent to its page (once per step). */
  payerStarted?: boolean;
  /** The payer left the ACS page without an answer: only the ACS window ends the sale. */
  abandoned?: boolean;
  /** When the current saga last said anything (ms): a saga silent for long is stalled. */
  lastEventAt?: number;
  /** The last step sent and the event that ended the scenario (`sale → declined: …`). */
  endedBy?: string;
}

/** An ending event as the report names it: a decline with the gateway's message. */
export function endOf(event: SagaEvent): string {
  return event.type === 'declined' && event.message ? `declined: ${event.message}` : event.type;
}

/**
 * A UUID v4 drawn from the seeded generator: payment ids are the sandbox's client_orderid, which
 * keys its fault draws, so the same seed hits the same payments with the same faults.
 */
export function seededUuid(random: () => number): string {
  const bytes = Array.from({ length: 16 }, () => Math.floor(random() * 256));
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.map((b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** mulberry32: a small seeded generator, so one seed gives one workload. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** A command a scenario's step sends. */
export type AnyCommand = PaymentCommand | PayoutCommand | AnyTransferCommand | CardReferenceCommand;
/** The saga a command is about. */
export const sagaOf = (command: AnyCommand) =>
  'paymentId' in command
    ? command.paymentId
    : 'transferId' in command
      ? command.transferId
      : command.payoutId;

/** The command of a scenario's step, on the run's stack. */
export function commandOf(stack: PaymentStack, s: Scenario, step: Step): AnyCommand {
  const amount = step.part ? Math.max(1, Math.round(s.amountMinor * step.part)) : undefined;
  const payout = { payoutId: s.paymentId, amountMinor: s.amountMinor };
  switch (step.type) {
    case 'sale':
      return stack.sale({
        paymentId: s.paymentId,
        cvv: step.cvv,
        amountMinor: s.amountMinor,
        endpointId: step.endpointId,
      });
    case 'preauth':
      return stack.preauth({
        paymentId: s.paymentId,
        cvv: step.cvv,
        amountMinor: s.amountMinor,
      });
    case 'capture':
      return stack.capture(s.paymentId, amount);
    case 'void':
      return stack.void(s.paymentId);
    case 'return':
      return stack.return(s.paymentId, amount);
    case 'payout':
    case 'payout-v4':
      return oneStepPayout({ ...payout, type: step.type });
    case 'payout-check':
      return payoutCheck(payout);
    case 'approve-payout':
      return approvePayout(s.paymentId);
    case 'transfer':
      return transfer({ ...payout, cvv: step.cvv });
    case 'transfer-by-ref':
      return transferByRef(payout);
    case 'payout-form':
      return payoutForm({
        ...payout,
        redirectUrl: `${stack.urls['callback-ingest']}/return/${SANDBOX_MERCHANT.plainEndpoint}`,
      });
    case 'create-card-ref':
      return {
        type: 'create-card-ref',
        commandId: randomUUID(),
        paymentId: s.paymentId,
        merchant: { endpointId: SANDBOX_MERCHANT.plainEndpoint },
        occurredAt: new Date().toISOString(),
      };
    case 'rebill': {
      const rebill: RebillCommand = {
        type: 'rebill',
        commandId: randomUUID(),
        // A saga of its own, drawn from the seed like every other: same seed, same faults.
        paymentId: s.saga,
        merchant: { endpointId: SANDBOX_MERCHANT.plainEndpoint },
        occurredAt: new Date().toISOString(),
        cardRef: { refId: s.cardRefId ?? '' },
        amount: { minor: amount ?? s.amountMinor, currency: 'USD' },
        order: { description: 'Rebill by card reference' },
      };
      return rebill;
    }
    default: {
      const never: never = step.type;
      throw new Error(`unknown step ${String(never)}`);
    }
  }
}

export function summarize(scenarios: readonly Scenario[]): ChaosReport['scenarios'] {
  const out: ChaosReport['scenarios'] = {};
  for (const s of scenarios) {
    const row = (out[s.name] ??= { started: 0, completed: 0, endedEarly: 0, unsent: 0 });
    row.started += 1;
    const complete = s.ended && s.next === s.steps.length && !s.ready;
    if (complete) row.completed += 1;
    else row.endedEarly += 1;
    row.unsent += s.steps.length - s.next;
  }
  return out;
}

export function endsOf(scenarios: readonly Scenario[]): ChaosReport['scenarioEnds'] {
  const out: ChaosReport['scenarioEnds'] = {};
  for (const s of scenarios) {
    const ends = (out[s.name] ??= {});
    const end = s.endedBy ?? 'not ended';
    ends[end] = (ends[end] ?? 0) + 1;
  }
  return out;
}
