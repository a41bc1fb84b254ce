import fc from 'fast-check';
import type { GatewayStatus } from '@payments/contracts';
import * as payouts from '../../../../test/kits/payout.kit';
import type { PayoutInput, PayoutState } from './model';

type Step = { label: string; input: (s: PayoutState, id: string) => PayoutInput };

const statusArb = fc.constantFrom<GatewayStatus>(
  'approved',
  'declined',
  'error',
  'filtered',
  'processing',
  'unknown',
);
const aboutArb = fc.constantFrom<Array<'payout-check' | 'payout-pay'>>(
  ['payout-check'],
  ['payout-pay'],
);

/** Anything that can reach a registered payout: approvals, rejections, results, callbacks, timers. */
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  fc.constant<Step>({ label: 'approve', input: (_s, id) => payouts.command(payouts.approve(id)) }),
  fc.constant<Step>({ label: 'reject', input: (_s, id) => payouts.command(payouts.reject(id)) }),
  fc.constant<Step>({ label: 'expiry', input: () => payouts.timer({ kind: 'approval-expiry' }) }),
  fc.tuple(statusArb, aboutArb).map(([status, about]) => ({
    label: `status ${status} about ${about.join()}`,
    input: (s: PayoutState) => payouts.statusReply(s, { status }, about),
  })),
  fc.constantFrom('accepted', 'unknown', 'not-sent', 'rejected').map((kind) => ({
    label: `send result ${kind}`,
    input: (s: PayoutState) =>
      payouts.sendResult(
        s,
        kind === 'accepted'
          ? { kind: 'accepted' }
          : kind === 'rejected'
            ? { kind: 'rejected', code: 'x', message: 'x' }
            : { kind, reason: 'x' },
      ),
  })),
  statusArb.map((status) => ({
    label: `callback ${status}`,
    input: (s: PayoutState, id: string): PayoutInput => ({
      kind: 'callback',
      callback: {
        kind: 'callback',
        notificationId: payouts.uuid(),
        paymentId: id,
        clientOrderId: id,
        source: 'server-callback',
        report: {
          status,
          gatewayOrderId: s.status === 'initial' ? 'G' : (s.gatewayOrderId ?? 'G'),
        },
        receivedAt: payouts.at(0),
      },
      about: ['payout-pay'],
    }),
  })),
);

/** Steps with a time: an offset in minutes from the registration (the window is 10 minutes). */
const timedStepsArb = fc.array(fc.tuple(stepArb, fc.integer({ min: 0, max: 20 })), {
  maxLength: 25,
});

/**
 * A registered payout and `steps` decided on it in order, each through `around` (given the world,
 * the payout and the step's `apply`, to call once) when a test watches every step.
 */
function registeredThrough(
  steps: ReadonlyArray<readonly [Step, number]>,
  around: (world: payouts.PayoutWorld, id: string, apply: () => void) => void = (_w, _id, apply) =>
    apply(),
) {
  const { world, id } = payouts.registeredPayout();
  for (const [step, minute] of steps)
    around(world, id, () => world.apply(id, (s) => step.input(s, id), payouts.at(minute * 60_000)));
  return { world, id };
}

describe('two-step payout properties', () => {
  it('at most one payout-pay per payout, whatever arrives in whatever order', () => {
    fc.assert(
      fc.property(timedStepsArb, (steps) => {
        const { world, id } = registeredThrough(steps);
        expect(world.paysSent(id)).toBeLessThanOrEqual(1);
      }),
      { numRuns: 300 },
    );
  });

  it('never paid after a rejection or an expiry', () => {
    fc.assert(
      fc.property(timedStepsArb, (steps) => {
        let closedAt: number | undefined;
        const { world, id } = registeredThrough(steps, (world, id, apply) => {
          const before = world.paysSent(id);
          apply();
          const status = world.state(id).status;
          if (closedAt === undefined && (status === 'rejected' || status === 'expired'))
            closedAt = world.paysSent(id);
          if (closedAt !== undefined) expect(world.paysSent(id)).toBe(before);
        });
        const types = world.types(id);
        const closed = types.findIndex((t) => t === 'payout-rejected' || t === 'payout-expired');
        if (closed >= 0) {
          expect(types.slice(closed)).not.toContain('payout-requested');
          expect(types).not.toContain('paid-out');
        }
      }),
      { numRuns: 300 },
    );
  });

  it('the daily limit holds under any interleaving of approvals and outcomes of many payouts', () => {
    const limit = payouts.POLICY.limits.default.dailyLimitMinor ?? 0;
    const payoutArb = fc.array(fc.integer({ min: 1, max: limit }), { minLength: 2, maxLength: 8 });
    const eventArb = fc.array(
      fc.tuple(
        fc.nat(),
        fc.constantFrom('approve', 'approve', 'paid', 'declined', 'error', 'unknown'),
      ),
      { maxLength: 40 },
    );
    fc.assert(
      fc.property(payoutArb, eventArb, (amounts, events) => {
        const world = new payouts.PayoutWorld();
        const ids = amounts.map(() => payouts.uuid());
        ids.forEach((id, i) => world.registered(id, amounts[i]));
        for (const [pick, what] of events) {
          const id = ids[pick % ids.length] ?? '';
          world.apply(id, (s) =>
            what === 'approve'
              ? payouts.command(payouts.approve(id))
              : what === 'unknown'
                ? payouts.sendResult(s, { kind: 'unknown', reason: 'timeout' })
                : payouts.statusReply(s, { status: what === 'paid' ? 'approved' : what }, [
                    'payout-pay',
                  ]),
          );
          // Money that left or may have left: payouts whose pay was sent and not declined/failed.
          const committed = ids
            .map((pid, j) => ({ s: world.state(pid), amount: amounts[j] ?? 0 }))
            .filter(({ s }) => s.status === 'paying' || s.status === 'paid')
            .reduce((sum, { amount }) => sum + amount, 0);
          expect(committed).toBeLessThanOrEqual(limit);
          const budget = world.budgetOfDay();
          expect(budget.status === 'open' ? budget.reservedMinor : 0).toBe(committed);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('daily budget properties', () => {
  it('one-step payouts, payout forms and approvals in any interleaving with any outcomes: what may have left never exceeds the day, and the budget reserves exactly it', () => {
    const limit = payouts.POLICY.limits.default.dailyLimitMinor ?? 0;
    const payoutArb = fc.array(
      fc.tuple(fc.integer({ min: 1, max: limit }), fc.constantFrom('payout', 'form', 'two-step')),
      { minLength: 2, maxLength: 8 },
    );
    const eventArb = fc.array(
      fc.tuple(
        fc.nat(),
        fc.constantFrom('open', 'open', 'approve', 'paid', 'declined', 'error', 'unknown'),
      ),
      { maxLength: 40 },
    );
    fc.assert(
      fc.property(payoutArb, eventArb, (opened, events) => {
        const world = new payouts.PayoutWorld();
        const ids = opened.map(() => payouts.uuid());
        ids.forEach((id, i) => {
          const [minor, kind] = opened[i] ?? [0, 'payout'];
          if (kind === 'two-step') world.registered(id, minor);
        });
        for (const [pick, what] of events) {
          const i = pick % ids.length;
          const id = ids[i] ?? '';
          const [minor, kind] = opened[i] ?? [0, 'payout'];
          world.apply(id, (s) => {
            if (what === 'open')
              return payouts.command(
                kind === 'form' ? payouts.payoutForm(id, minor) : payouts.oneStepPayout(id, minor),
              );
            if (what === 'approve') return payouts.command(payouts.approve(id));
            if (what === 'unknown')
              return payouts.sendResult(s, { kind: 'unknown', reason: 'timeout' });
            const op = s.status === 'initial' ? undefined : s.inFlight?.operation;
            const status = what === 'paid' ? 'approved' : what;
            return payouts.statusReply(s, { status }, op === undefined ? ['payout'] : [op]);
          });
          // Money that left or may have left: payouts whose paying request went out and that
          // were not declined or failed since.
          const paying = ids
            .map((pid, j) => ({ pid, s: world.state(pid), minor: opened[j]?.[0] ?? 0 }))
            .filter(({ s }) => s.status === 'paying' || s.status === 'paid');
          const committed = paying.reduce((sum, { minor }) => sum + minor, 0);
          expect(committed).toBeLessThanOrEqual(limit);
          expect(world.book.reservedOn()).toBe(committed);
          for (const { pid } of paying)
            expect(
              world.sent.filter((r) => r.payoutId === pid && r.operation !== 'payout-check'),
            ).toHaveLength(1);
          for (const pid of ids)
            if (world.state(pid).status === 'refused')
              expect(world.sent.filter((r) => r.payoutId === pid)).toEqual([]);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('one-step payout properties', () => {
  const oneStepStepArb: fc.Arbitrary<Step> = fc.oneof(
    stepArb,
    fc.constant<Step>({
      label: 'the payout command again',
      input: (_s, id) => payouts.command(payouts.oneStepPayout(id)),
    }),
    fc.constant<Step>({
      label: 'status poll due',
      input: (s) =>
        payouts.timer({
          kind: 'status-poll',
          requestId:
            s.status === 'initial' ? payouts.uuid() : (s.inFlight?.requestId ?? payouts.uuid()),
          attempt: 1,
        }),
    }),
    statusArb.map((status) => ({
      label: `status ${status} about payout`,
      input: (s: PayoutState) => payouts.statusReply(s, { status }, ['payout']),
    })),
  );

  it('one payout request, at most one outcome, and a final outcome never changes, whatever arrives', () => {
    fc.assert(
      fc.property(fc.array(oneStepStepArb, { maxLength: 25 }), (steps) => {
        const { world, id } = payouts.opened(payouts.oneStepPayout);
        let final: string | undefined;
        for (const step of steps) {
          world.apply(id, (s) => step.input(s, id));
          const status = world.state(id).status;
          if (final !== undefined) expect(status).toBe(final);
          if (['paid', 'declined', 'failed'].includes(status)) final = status;
        }
        expect(world.sent.filter((r) => r.operation === 'payout')).toHaveLength(1);
        expect(world.sent.filter((r) => r.operation === 'payout-pay')).toHaveLength(0);
        const outcomes = world
          .types(id)
          .filter((t) => t === 'paid-out' || t === 'payout-declined' || t === 'payout-failed');
        expect(outcomes.length).toBeLessThanOrEqual(1);
      }),
      { numRuns: 300 },
    );
  });
});
