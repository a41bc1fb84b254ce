import { SessionSealer } from './session';

const SECRET = 'a-session-secret-of-at-least-32-characters';
const user = { token: 'op-token-0123456789abcdef', name: 'alice', role: 'operator' as const };

describe('SessionSealer', () => {
  it('opens what it sealed, and the sealed value does not show the token', () => {
    const sealer = new SessionSealer(SECRET, 60_000);
    const session = sealer.fresh(user);
    const sealed = sealer.seal(session);
    expect(sealed).not.toContain(user.token);
    expect(Buffer.from(sealed, 'base64url').toString('latin1')).not.toContain(user.token);
    expect(sealer.open(sealed)).toEqual(session);
  });

  it('refuses an altered value, one sealed with another secret, and garbage', () => {
    const sealer = new SessionSealer(SECRET, 60_000);
    const sealed = sealer.seal(sealer.fresh(user));
    const raw = Buffer.from(sealed, 'base64url');
    for (let i = 0; i < raw.length; i += 7) {
      const altered = Buffer.from(raw);
      altered[i] = (altered[i] ?? 0) ^ 0x01;
      expect(sealer.open(altered.toString('base64url'))).toBeUndefined();
    }
    const other = new SessionSealer(`${SECRET}-other`, 60_000);
    expect(other.open(sealed)).toBeUndefined();
    expect(sealer.open('')).toBeUndefined();
    expect(sealer.open('not-base64-!!')).toBeUndefined();
    expect(sealer.open(undefined)).toBeUndefined();
  });

  it('refuses a session past its end', () => {
    let now = 1_000_000;
    const sealer = new SessionSealer(SECRET, 60_000, () => now);
    const sealed = sealer.seal(sealer.fresh(user));
    now += 59_999;
    expect(sealer.open(sealed)?.user).toEqual(user);
    now += 1;
    expect(sealer.open(sealed)).toBeUndefined();
  });

  it('gives every fresh session its own CSRF token', () => {
    const sealer = new SessionSealer(SECRET, 60_000);
    const tokens = new Set(Array.from({ length: 50 }, () => sealer.fresh().csrf));
    expect(tokens.size).toBe(50);
  });
});
