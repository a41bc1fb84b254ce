import type { ChaosReport } from './chaos-config';
import { inLimbo } from './report';

/** Issue 33: a chaos run ends with 0 sagas in limbo (alerted, in no open case with evidence). */
const report = (
  unknown: Array<{ paymentId: string; alerted: boolean; deliberate?: boolean }>,
  sagasWithEvidence?: string[],
) =>
  ({
    checks: {
      unknown: unknown.map((u) => ({
        ageSeconds: 1,
        lastEvent: 'outcome-unknown',
        deliberate: false,
        ...u,
      })),
    },
    openCases:
      sagasWithEvidence === undefined
        ? undefined
        : {
            open: sagasWithEvidence.length,
            withEvidence: sagasWithEvidence.length,
            sagasWithEvidence,
          },
  }) as unknown as ChaosReport;

describe('chaos report: sagas in limbo', () => {
  it('an alerted saga without an open case holding evidence is in limbo; one with such a case is not', () => {
    expect(
      inLimbo(
        report(
          [
            { paymentId: 'a', alerted: true },
            { paymentId: 'b', alerted: true },
            { paymentId: 'c', alerted: true, deliberate: true },
            { paymentId: 'd', alerted: false },
          ],
          ['a'],
        ),
      ),
    ).toEqual(['b', 'c']);
  });

  it('no alerted saga, or each in its case: none in limbo', () => {
    expect(inLimbo(report([{ paymentId: 'a', alerted: true }], ['a']))).toEqual([]);
    expect(inLimbo(report([], []))).toEqual([]);
  });
});
