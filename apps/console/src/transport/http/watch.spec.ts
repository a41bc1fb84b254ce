import { liveRow, minutesFragment } from './watch';

describe('the Watch fragments', () => {
  it('a live row escapes what it shows and links the saga', () => {
    const row = liveRow({
      id: '0-1',
      type: '<img src=x onerror=alert(1)>',
      sagaId: 'a"b',
      version: 1,
      occurredAt: '2026-11-27T10:00:00.000Z',
      amount: { minor: 1999, currency: 'EUR' },
      moneyMoved: true,
    }).text;
    expect(row).not.toContain('<img');
    expect(row).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(row).toContain('href="/sagas/a%22b"');
    expect(row).toContain('19.99 EUR moved');
  });

  it('the chart sums minor units as integers per currency, scales bars and carries no style attribute', () => {
    const fragment = minutesFragment({
      since: '2026-11-27T09:00:00.000Z',
      minutes: [
        { minute: '2026-11-27T10:00:00.000Z', events: 4, moved: { USD: 10, JPY: 500 } },
        { minute: '2026-11-27T10:01:00.000Z', events: 0, moved: {} },
        { minute: '2026-11-27T10:02:00.000Z', events: 2, moved: { USD: 20 } },
      ],
    }).text;
    expect(fragment).toContain('data-events="6"');
    expect(fragment).toMatch(/data-currency="USD"\s+data-minor="30"/);
    expect(fragment).toContain('0.30 USD moved');
    expect(fragment).toContain('500 JPY moved');
    expect(fragment).toMatch(/id="chartMovedJPY"/);
    // The tallest bar of the events chart fills the height; an empty minute has none.
    expect(fragment).toMatch(/height="76"\s+data-value="4"/);
    expect(fragment).toMatch(/height="0"\s+data-value="0"/);
    expect(fragment).not.toMatch(/\sstyle=/);
  });
});
