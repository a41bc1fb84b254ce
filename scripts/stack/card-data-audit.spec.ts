import { scanText } from './card-data-audit';

const KEY = 'B17F59B4-A7DC-41B4-8FF9-37D986B43D20';
const rules = (text: string) => scanText(text, 'test', [KEY]).map((f) => f.rule);

describe('scanText', () => {
  it('finds a card number, contiguous or grouped, and never prints it', () => {
    const findings = scanText('{"pan":"4444444444444448"} and 4111 1111 1111 1111', 'test');
    expect(findings.map((f) => f.rule)).toEqual(['card-number', 'card-number']);
    for (const f of findings) expect(f.excerpt).not.toMatch(/4444444444444448|4111 1111 1111 1111/);
  });

  it('finds CVVs as JSON, form and query fields, under any card-security-code name', () => {
    expect(rules('{"cvv":"123"}')).toEqual(['cvv-field']);
    expect(rules('{"card":{"cvv2":1234}}')).toEqual(['cvv-field']);
    expect(rules('amount=10.00&cvv2=123&currency=USD')).toEqual(['cvv-field']);
    expect(rules('{"security_code":"999"}')).toEqual(['cvv-field']);
    expect(rules('{"cvv":"[REDACTED]"}')).toEqual([]);
  });

  it('finds control keys in any case, private keys and signatures', () => {
    expect(rules(`key ${KEY.toLowerCase()}`)).toEqual(['control-key']);
    expect(rules('-----BEGIN RSA PRIVATE KEY-----\nMIIE')).toEqual(['private-key']);
    expect(rules('status=approved&control=c6bdd88a78834ef4b863b088827a459f039e8257')).toEqual([
      'signature',
    ]);
    expect(rules('{"control":"C6BDD88A78834EF4B863B088827A459F039E8257"}')).toEqual(['signature']);
    expect(
      rules('OAuth oauth_nonce="x", oauth_signature="tR3%2BTy81lMeYAr%2FFid0kMTYa%2FWM%3D"'),
    ).toEqual(['signature']);
    expect(rules('oauth_signature="[REDACTED]"')).toEqual([]);
  });

  it('leaves UUIDs, hex trace ids and digests alone, but not a bare 16-digit card', () => {
    expect(
      rules(
        '00-ac187af2afdc77b11d9a15663065c746-f411111111111116-01 6f0d9d5e-2d6a-4c55-9a55-0c1d2e3f4a5b sha256:e5828170ce25b550e15729c8320d677860510510510510507abcdef12345678901',
      ),
    ).toEqual([]);
    expect(rules('00-4444444444444448-01')).toEqual(['card-number']);
    // A span id that is all digits and Luhn-valid (seen in the default chaos run).
    expect(
      rules('"traceparent":"00-40cf5031b3a5a7deef3f3938caea4927-4111111111111111-01"'),
    ).toEqual([]);
  });
});
