import type { DayCloseView } from '../../application/admin-api.client';
import type { SignedInUser } from '../../application/session';
import { csvField, dayCloseCsv, dayClosePage } from './day-close';

const close: DayCloseView = {
  closeId: 'c1',
  merchant: { endpointId: '1111' },
  day: '2026-01-01',
  timeZone: 'UTC',
  from: '2026-01-01T00:00:00Z',
  to: '2026-01-02T00:00:00Z',
  totals: [
    { eventType: 'approved', currency: 'USD', count: 2, sumMinor: '90071992547409931' },
    { eventType: 'returned', currency: 'KWD', count: 1, sumMinor: '1234' },
  ],
  count: 3,
  lastMerchantSeq: 3,
  occurredAt: '2026-01-02T00:05:00Z',
  closedBy: 'finance',
};

const operator: SignedInUser = { token: 't', name: 'fiona', role: 'operator', scope: 'all' };

describe('the day close page', () => {
  it('shows the state and the totals per currency in major units from digit strings (past 2^53)', () => {
    const page = dayClosePage('2026-01-01', undefined, [close], operator, 'c').text;
    expect(page).toContain('closed <time');
    expect(page).toContain('900719925474099.31 USD');
    expect(page).toContain('1.234 KWD');
    expect(page).toContain('id="dayCsv"');
    expect(page).toContain('id="closeDayForm"');
  });

  it('renders fields it does not know by name (gateway totals, differences, exceptions) as tables', () => {
    const extended = {
      ...close,
      differences: [{ currency: 'USD', eventType: 'approved', sumMinor: '500', note: '<x>' }],
      exceptions: [],
    } as DayCloseView;
    const page = dayClosePage('2026-01-01', '1111', [extended], operator, 'c').text;
    expect(page).toContain('id="differences-1111"');
    // That merchant's day is closed: no button to close it again.
    expect(page).not.toContain('id="closeDayForm"');
    expect(page).toContain('5.00 USD');
    expect(page).toContain('&lt;x&gt;');
    expect(page).toContain('id="exceptions-1111"');
  });

  it('says a day with no close is not closed; a viewer gets no close form', () => {
    const viewer = { ...operator, role: 'viewer' as const };
    const page = dayClosePage('2026-01-01', undefined, [], viewer, 'c').text;
    expect(page).toContain('State: not closed');
    expect(page).not.toContain('id="closeDayForm"');
  });
});

describe('the day close CSV', () => {
  it('has a row per total and per row of any other list, sums in minor and major units', () => {
    const csv = dayCloseCsv([
      {
        ...close,
        differences: [{ currency: 'USD', sumMinor: '500', note: 'a,b' }],
      },
    ]);
    const lines = csv.trim().split('\r\n');
    expect(lines[0]).toBe(
      'section,day,endpoint,timeZone,currency,eventType,count,sumMinor,sum,closedAt,closedBy,detail',
    );
    expect(lines[1]).toBe(
      'totals,2026-01-01,1111,UTC,USD,approved,2,90071992547409931,900719925474099.31 USD,2026-01-02T00:05:00Z,finance,',
    );
    expect(lines[3]).toBe(
      'differences,2026-01-01,1111,UTC,USD,,,500,5.00 USD,2026-01-02T00:05:00Z,finance,"note=a,b"',
    );
  });

  it('neutralises a leading formula character and quotes what needs it', () => {
    expect(csvField('=HYPERLINK("x")')).toBe(`"'=HYPERLINK(""x"")"`);
    expect(csvField('plain')).toBe('plain');
  });
});
