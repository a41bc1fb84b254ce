import { z } from 'zod';
import { derivedUuid } from './derived-id';

describe('derivedUuid', () => {
  it('is a valid UUID, the same for the same name and different for another', () => {
    const a = derivedUuid('schedule/1/cycle/0/attempt/1');
    expect(z.uuid().safeParse(a).success).toBe(true);
    expect(derivedUuid('schedule/1/cycle/0/attempt/1')).toBe(a);
    expect(derivedUuid('schedule/1/cycle/0/attempt/2')).not.toBe(a);
  });
});
