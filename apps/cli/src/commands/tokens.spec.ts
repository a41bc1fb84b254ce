import { UsageError } from './errors';
import { scopeOf, tokenLine } from './tokens';

describe('payments tokens', () => {
  it('a scope is every merchant or the listed endpoints, never both or neither', () => {
    expect(scopeOf({ allMerchants: true })).toBe('all');
    expect(scopeOf({ endpoint: ['1234', '77'] })).toEqual({ endpoints: ['1234', '77'] });
    expect(() => scopeOf({})).toThrow(UsageError);
    expect(() => scopeOf({ allMerchants: true, endpoint: ['1'] })).toThrow(UsageError);
    expect(() => scopeOf({ endpoint: ['acme'] })).toThrow(UsageError);
  });

  it('lists a token by id, name, role, scope and its history, never its secret', () => {
    const line = tokenLine({
      id: 't-1',
      name: 'alice',
      role: 'approver',
      scope: { endpoints: ['1234'] },
      createdAt: '2026-11-29T00:00:00.000Z',
      createdBy: 'root',
      revokedAt: '2026-11-29T01:00:00.000Z',
      revokedBy: 'bob',
    });
    expect(line).toBe(
      't-1  alice  approver  endpoints 1234  created 2026-11-29T00:00:00.000Z by root  revoked 2026-11-29T01:00:00.000Z by bob',
    );
  });
});
