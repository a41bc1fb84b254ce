import { inputMeta } from './input-meta';

const PARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

describe('inputMeta', () => {
  it('takes the traceparent from the consumed headers, nothing else', () => {
    expect(inputMeta({ traceparent: PARENT, ce_id: 'x' })).toEqual({ traceparent: PARENT });
    expect(inputMeta({})).toEqual({});
  });
});
