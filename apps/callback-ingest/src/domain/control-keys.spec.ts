import { inspect } from 'node:util';
import { ControlKeyStore } from './control-keys';

const KEY = 'B17F59B4-A7DC-41B4-8FF9-37D986B43D20';

describe('ControlKeyStore', () => {
  it('parses {endpointId: key} and answers per endpoint', () => {
    const r = ControlKeyStore.fromJson(JSON.stringify({ '1111': KEY, group_2: `${KEY}x` }));
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.store.keyFor('1111')).toBe(KEY);
    expect(r.store.keyFor('group_2')).toBe(`${KEY}x`);
    expect(r.store.keyFor('9999')).toBeUndefined();
    expect(r.store.keyFor('__proto__')).toBeUndefined();
  });

  it('never shows a key through JSON, String or inspect', () => {
    const store = ControlKeyStore.of({ '1111': KEY });
    for (const text of [
      JSON.stringify(store),
      String(store),
      inspect(store),
      `${inspect({ store })}`,
    ]) {
      expect(text).toContain('1111');
      expect(text).not.toContain(KEY);
    }
  });

  it.each([
    ['not JSON', `{"1111": "${KEY}"`],
    ['an array', `["${KEY}"]`],
    ['empty', '{}'],
    ['a short key', '{"1111": "short"}'],
    ['a padded key', `{"1111": " ${KEY}"}`],
    ['a non-string key', '{"1111": 12345678901234567}'],
    ['a bad endpoint id', `{"11/11": "${KEY}"}`],
  ])('refuses %s without echoing any key', (_, text) => {
    const r = ControlKeyStore.fromJson(text);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problem).not.toContain(KEY);
    expect(r.problem).not.toContain('short');
  });
});
