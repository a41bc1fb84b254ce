import { loadConfig } from '@payments/config';
import { sandboxConfigShape } from './config';

describe('sandbox configuration', () => {
  it('enforces the JSON Accept header by default (the spec: "must be application/vnd.pay+json")', () => {
    expect(loadConfig('gateway-sandbox', sandboxConfigShape, {}).acceptMode).toBe('reject');
  });

  it('can emulate the real gateway form-encoded reply, and refuses other modes by name', () => {
    const env = { SANDBOX_ACCEPT_MODE: 'form' };
    expect(loadConfig('gateway-sandbox', sandboxConfigShape, env).acceptMode).toBe('form');
    expect(() =>
      loadConfig('gateway-sandbox', sandboxConfigShape, { SANDBOX_ACCEPT_MODE: 'lenient' }),
    ).toThrow(/SANDBOX_ACCEPT_MODE: expected reject \(406/);
  });
});
