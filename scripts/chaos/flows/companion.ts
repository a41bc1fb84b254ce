/**
 * A flow family's chaos companion: what the chaos suite needs to know about one family of
 * `FLOW_FAMILIES` (libs/contracts), kept on the test side (test code never goes in `src/`). The
 * workload's scenarios and command builders and the checks' lists (command types, saga events,
 * once-per-operation, money out, refused before sending, expected movements) are built from the
 * companions (`flows/index.ts`); `flows/companions.spec.ts` fails when a family has none.
 */
import type { z } from 'zod';
import type { AnyEvent, FlowFamily } from '@payments/contracts';
import type { PaymentStack } from '../../stack/payment-stack';
import type { FaultRule, Movement } from '../../stack/sandbox-controls';
import type { ChallengeAnswer } from '../../stack/payer-http';

/**
 * What the payer does at the page the saga's action-required names: the ACS challenge of a 3-D
 * Secure payment (pass, fail with a wrong password, cancel, or leave the page), the hosted card
 * form a payer fills in (`card-form`), or the hosted payout form the payee fills in.
 */
export type PayerPlan =
  Exclude<ChallengeAnswer, 'hinted-password'> | 'pass' | 'payee' | 'card-form';

/** What decides a fault's timing: the run's windows (a slow send must outlast the no-trace one). */
export interface FaultTiming {
  readonly neverReceivedSeconds: number;
  readonly gatewayTimeoutMs: number;
}

/**
 * One step of a scenario: a command, each after the previous step succeeded. `type` names a
 * command of some companion's `commands`.
 */
export interface Step {
  readonly type: string;
  readonly cvv?: string;
  /** The merchant endpoint; the plain one (no 3-D Secure) when unset. */
  readonly endpointId?: string;
  /** A scripted payer (or payee) acts on the step's action-required page over HTTP. */
  readonly payer?: PayerPlan;
  /** Fraction of the payment's amount (partial capture/return); whole when unset. */
  readonly part?: number;
  /** The events that let the next step go (or complete the scenario); default the command's success. */
  readonly until?: readonly string[];
  /** Events that end the scenario early besides the families' ending events. */
  readonly ends?: readonly string[];
  /**
   * Sandbox faults aimed at this step's saga (its clientOrderId), added just before it is sent:
   * e.g. the capture declined once, the first SALE slower than the no-trace window.
   */
  readonly faults?: (timing: FaultTiming) => readonly Omit<FaultRule, 'clientOrderId'>[];
  /**
   * Sent together with this step, on the same saga (after it, without waiting for its answer):
   * two operations of one saga in flight at once.
   */
  readonly alongside?: Omit<Step, 'alongside'>;
}

export interface ScenarioShape {
  readonly name: string;
  /** Relative weight in the seeded draw. */
  readonly weight: number;
  readonly steps: readonly Step[];
  /** Started once before the seeded draw in every run (the flows a small run might never draw). */
  readonly guaranteed?: boolean;
}

/** What a step's command is built from. */
export interface StepContext {
  readonly stack: PaymentStack;
  /** The scenario's first saga id (a payment's, payout's, transfer's). */
  readonly scenarioId: string;
  /** The saga this step goes to: the scenario's own, or one of its own (`ownSaga`). */
  readonly saga: string;
  readonly amountMinor: number;
  /** The step's amount when partial (`part`), else undefined (the whole). */
  readonly partMinor?: number;
  readonly step: Step;
  /**
   * The merchant endpoint of the step: its own, else the scenario's first step's (a follow-up
   * goes to the endpoint its payment was made on), else the plain one.
   */
  readonly endpointId?: string;
  /** The card reference an earlier step made (card-ref-created). */
  readonly cardRefId?: string;
}

/** A command the workload sends. */
export type WorkloadCommand = { readonly type: string; readonly commandId: string } & Record<
  string,
  unknown
>;

export interface CommandRule {
  /** The step's command. */
  readonly build: (ctx: StepContext) => WorkloadCommand;
  /** The event that lets the next step go (the step succeeded). */
  readonly success: string;
  /**
   * The ledger movement this command intends, once: more of that movement than such commands on
   * one saga is a double charge.
   */
  readonly once?: Movement;
  /** Starts a saga of its own (a rebill, a PAN-eligibility check), drawn with the scenario. */
  readonly ownSaga?: boolean;
  /** The command names the card reference an earlier step made (checked against its request). */
  readonly namesCardRef?: boolean;
}

/**
 * What an event is to the checks: a gateway request issued (`requested`), settled (`final`),
 * left unknown (`unknown`: with `alert` raised for a person), sent again (`resent`), a request
 * refused before it was sent (`refused-before-sending`: settled, nothing moved), a command refused
 * (`rejected`), or nothing of these (`none`).
 */
export type EventRole =
  'requested' | 'final' | 'unknown' | 'resent' | 'refused-before-sending' | 'rejected' | 'none';

/** Whether the saga holds an open authorization (a void or return then releases it). */
export interface MoveState {
  holdOpen: boolean;
}

export interface EventRule<E> {
  readonly role: EventRole;
  /** The ledger movements (`"charged 1000"`) the event says the gateway made. */
  readonly moves?: (event: E, state: MoveState) => string[];
  /** The scenario sends nothing more after it (the step did not succeed, or the saga ended). */
  readonly endsScenario?: true;
}

type EventsOf<F extends FlowFamily> = {
  readonly [T in keyof F['events'] & string]: EventRule<z.infer<F['events'][T]>>;
};

/**
 * One family's companion. `events` names every event type of the family (the compiler refuses
 * one left out), so a new event is a decision: what it says moved, and what it is to the checks.
 */
export interface ChaosCompanion<F extends FlowFamily = FlowFamily> {
  /** The family's `name` in FLOW_FAMILIES. */
  readonly family: F['name'];
  readonly scenarios: readonly ScenarioShape[];
  /** Why a family has no scenarios of the main workload (its sagas are started otherwise). */
  readonly noScenariosBecause?: string;
  readonly commands: { readonly [T in keyof F['commands'] & string]?: CommandRule };
  readonly events: EventsOf<F>;
  /**
   * The movements an operation left in flight (its requested event's `operation`, or the
   * event's type when it names none) may have made: what an unknown or alerted saga's ledger may
   * hold beyond what its events report.
   */
  readonly mayMove: Readonly<Record<string, readonly Movement[]>>;
  /** Money out of the merchant's account: what the daily payout limit bounds. */
  readonly moneyOut?: readonly Movement[];
  /**
   * A saga that reached `after` is not final before one of `endedBy` (a registered two-step
   * payout awaits its approval or expiry).
   */
  readonly awaits?: { readonly after: string; readonly endedBy: readonly string[] };
}

/** The companion of a family, typed by it. */
export function chaosCompanion<F extends FlowFamily>(
  _family: F,
  companion: ChaosCompanion<F>,
): ChaosCompanion {
  return companion;
}

/** An event of a saga the workload starts (every family's; schedule and budget ones unused). */
export type SagaEvent = AnyEvent;
