import {
  AdminTokensSchema,
  allows,
  authenticate,
  inScope,
  newTokenText,
  scopedEndpoints,
  tokenHash,
} from './admin-tokens';

const ALICE = 'alice-token-0123456789abcdef';
const BOB = 'bob-token-0123456789abcdef01';
const CAROL = 'carol-token-0123456789abcdef';

const tokens = AdminTokensSchema.parse(
  JSON.stringify([
    { name: 'alice', role: 'operator', sha256: tokenHash(ALICE) },
    { name: 'bob', role: 'viewer', sha256: tokenHash(BOB).toUpperCase() },
    { name: 'carol', role: 'approver', scope: { endpoints: ['1234'] }, sha256: tokenHash(CAROL) },
  ]),
);

describe('admin tokens', () => {
  it('knows a configured token by its hash, whatever the hex case', () => {
    expect(authenticate(`Bearer ${ALICE}`, tokens)).toEqual({
      ok: true,
      principal: { name: 'alice', role: 'operator', scope: 'all' },
    });
    expect(authenticate(`Bearer ${BOB}`, tokens)).toEqual({
      ok: true,
      principal: { name: 'bob', role: 'viewer', scope: 'all' },
    });
    expect(authenticate(`Bearer ${CAROL}`, tokens)).toEqual({
      ok: true,
      principal: { name: 'carol', role: 'approver', scope: { endpoints: ['1234'] } },
    });
  });

  it('refuses a missing, malformed or unknown token', () => {
    expect(authenticate(undefined, tokens)).toEqual({ ok: false, reason: 'missing' });
    expect(authenticate('', tokens)).toEqual({ ok: false, reason: 'missing' });
    expect(authenticate(`Basic ${ALICE}`, tokens)).toEqual({ ok: false, reason: 'malformed' });
    expect(authenticate('Bearer short', tokens)).toEqual({ ok: false, reason: 'malformed' });
    expect(authenticate(`Bearer ${ALICE}x`, tokens)).toEqual({ ok: false, reason: 'unknown' });
    expect(authenticate(`Bearer ${tokenHash(ALICE)}`, tokens)).toEqual({
      ok: false,
      reason: 'unknown',
    });
    expect(authenticate(`Bearer ${ALICE}`, [])).toEqual({ ok: false, reason: 'unknown' });
  });

  it('viewers read, operators read and act, approvers do both and what needs an approver', () => {
    expect(allows('viewer', 'viewer')).toBe(true);
    expect(allows('viewer', 'operator')).toBe(false);
    expect(allows('viewer', 'approver')).toBe(false);
    expect(allows('operator', 'operator')).toBe(true);
    expect(allows('operator', 'viewer')).toBe(true);
    expect(allows('operator', 'approver')).toBe(false);
    expect(allows('approver', 'operator')).toBe(true);
    expect(allows('approver', 'approver')).toBe(true);
  });

  it('a scope sees its merchants only; "all" sees every one', () => {
    expect(inScope('all', '9')).toBe(true);
    expect(inScope({ endpoints: ['1234', '55'] }, '55')).toBe(true);
    expect(inScope({ endpoints: ['1234'] }, '12345')).toBe(false);
    expect(scopedEndpoints('all')).toBeUndefined();
    expect(scopedEndpoints({ endpoints: ['1'] })).toEqual(['1']);
  });

  it('a new token is prefixed, long and URL-safe', () => {
    const text = newTokenText(Buffer.alloc(32, 0xff));
    expect(text).toMatch(/^pat_[A-Za-z0-9_-]{43}$/);
  });

  it('configuration: defaults to none; refuses a clear token, bad JSON, unknown roles, duplicates', () => {
    expect(AdminTokensSchema.parse(undefined)).toEqual([]);
    const bad = (value: unknown) => AdminTokensSchema.safeParse(JSON.stringify(value)).success;
    expect(AdminTokensSchema.safeParse('not json').success).toBe(false);
    expect(bad([{ name: 'a', role: 'operator', sha256: ALICE }])).toBe(false);
    expect(bad([{ name: 'a', role: 'admin', sha256: tokenHash(ALICE) }])).toBe(false);
    expect(
      bad([{ name: 'a', role: 'viewer', scope: { endpoints: [] }, sha256: tokenHash(ALICE) }]),
    ).toBe(false);
    expect(bad([{ name: 'a', role: 'viewer', scope: 'some', sha256: tokenHash(ALICE) }])).toBe(
      false,
    );
    expect(
      bad([
        { name: 'a', role: 'viewer', sha256: tokenHash(ALICE) },
        { name: 'a', role: 'viewer', sha256: tokenHash(BOB) },
      ]),
    ).toBe(false);
    expect(
      bad([
        { name: 'a', role: 'viewer', sha256: tokenHash(ALICE) },
        { name: 'b', role: 'operator', sha256: tokenHash(ALICE) },
      ]),
    ).toBe(false);
  });
});
