import { collectParams } from './params';
import { notificationId } from './notification-id';

describe('collectParams', () => {
  it('merges query and body, decoding form encoding', () => {
    const r = collectParams(['a=1&b=x+y', 'c=%C3%A9&b=x%20y'], 10);
    expect(r).toEqual({ ok: true, params: { a: '1', b: 'x y', c: 'é' } });
  });

  it('refuses a name repeated with different values', () => {
    expect(collectParams(['status=approved', 'status=declined'], 10)).toMatchObject({
      ok: false,
      code: 'malformed-callback',
    });
  });

  it('counts parameters against the limit', () => {
    expect(collectParams(['a=1&b=2&c=3'], 3).ok).toBe(true);
    expect(collectParams(['a=1&b=2&c=3&d=4'], 3)).toMatchObject({
      ok: false,
      code: 'too-many-parameters',
    });
  });

  it('keeps __proto__ as a plain parameter', () => {
    const r = collectParams(['__proto__=x&a=1'], 10);
    expect(r.ok && Object.getPrototypeOf(r.params)).toBe(Object.prototype);
    expect(r.ok && r.params.a).toBe('1');
  });
});

describe('notificationId', () => {
  const params = { status: 'approved', orderid: '1', merchant_order: 'm', control: 'c1' };

  it('is independent of parameter order and of the control', () => {
    const reordered = { control: 'c2', merchant_order: 'm', orderid: '1', status: 'approved' };
    expect(notificationId('callback', 'server-callback', '1111', reordered)).toBe(
      notificationId('callback', 'server-callback', '1111', params),
    );
  });

  it('differs by value, endpoint, source and kind, without boundary collisions', () => {
    const base = notificationId('callback', 'server-callback', '1111', params);
    expect(
      notificationId('callback', 'server-callback', '1111', { ...params, status: 'declined' }),
    ).not.toBe(base);
    expect(notificationId('callback', 'server-callback', '1112', params)).not.toBe(base);
    expect(notificationId('callback', 'browser-return', '1111', params)).not.toBe(base);
    expect(notificationId('status-check-hint', 'server-callback', '1111', params)).not.toBe(base);
    expect(notificationId('callback', 'server-callback', '1111', { ab: 'c' })).not.toBe(
      notificationId('callback', 'server-callback', '1111', { a: 'bc' }),
    );
  });
});
