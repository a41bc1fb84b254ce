import { SessionRevocations, SessionSealer, signInKeys, SignInThrottle } from './session';

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

  it('refuses a session idle longer than the idle timeout, and a touch restarts its idle clock', () => {
    let now = 1_000_000;
    const sealer = new SessionSealer(SECRET, 8 * 3_600_000, () => now, 600_000);
    const session = sealer.fresh(user);
    now += 300_000;
    const touched = sealer.touch(session);
    expect(touched?.seenAt).toBe(now);
    const sealed = sealer.seal(touched!);
    now += 600_000;
    expect(sealer.open(sealed)?.user).toEqual(user);
    now += 1;
    expect(sealer.open(sealed)).toBeUndefined();
    expect(sealer.open(sealer.seal(session))).toBeUndefined();
  });
});

describe('SessionRevocations', () => {
  it('refuses a signed-out session (a copy of its cookie too), not another', () => {
    const sealer = new SessionSealer(SECRET, 60_000);
    const revocations = new SessionRevocations();
    const signedOut = sealer.fresh(user);
    const copy = sealer.open(sealer.seal(signedOut))!;
    const other = sealer.fresh(user);
    revocations.revoke(signedOut);
    expect(revocations.isRevoked(copy)).toBe(true);
    expect(revocations.isRevoked(other)).toBe(false);
  });
});

describe('SignInThrottle', () => {
  it('refuses a client or a token prefix past its failures in the window, until the window moves on', () => {
    let now = 0;
    const throttle = new SignInThrottle(3, 60_000, () => now);
    const mallory = signInKeys('10.0.0.9', 'guess-0001-aaaa');
    for (let i = 0; i < 3; i += 1) {
      expect(throttle.retryAfterSeconds(mallory)).toBe(0);
      throttle.failed(mallory);
      now += 1_000;
    }
    expect(throttle.retryAfterSeconds(mallory)).toBe(57);
    // Another address trying the same token prefix, and the same address with another token.
    expect(throttle.retryAfterSeconds(signInKeys('10.0.0.10', 'guess-00xx'))).toBeGreaterThan(0);
    expect(throttle.retryAfterSeconds(signInKeys('10.0.0.9', 'other-token'))).toBeGreaterThan(0);
    expect(throttle.retryAfterSeconds(signInKeys('10.0.0.10', 'other-token'))).toBe(0);
    now += 57_000;
    expect(throttle.retryAfterSeconds(mallory)).toBe(0);
  });
});
