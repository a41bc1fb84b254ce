import { ServerSentEventReader, serverSentEvent } from './server-sent-events';

describe('ServerSentEventReader', () => {
  it('yields whole frames across chunk boundaries, skipping comments and ids', () => {
    const reader = new ServerSentEventReader();
    expect(reader.push('event: ready\ndata: {}\n\n: keepalive\n\nid: 0-1\nevent: outc')).toEqual([
      { event: 'ready', data: '{}' },
    ]);
    expect(reader.push('ome\ndata: {"a":1}\r\n\r\ndata: x\ndata: y\n\n')).toEqual([
      { event: 'outcome', data: '{"a":1}' },
      { event: 'message', data: 'x\ny' },
    ]);
  });

  it('refuses a frame that never ends', () => {
    const reader = new ServerSentEventReader();
    expect(() => reader.push('data: ' + 'x'.repeat(70_000))).toThrow(/too long/);
  });

  it('writes what it reads back: line breaks in the data stay data', () => {
    const frame = serverSentEvent('outcome', '<tr>\n<td>a</td></tr>');
    expect(frame).toBe('event: outcome\ndata: <tr>\ndata: <td>a</td></tr>\n\n');
    expect(new ServerSentEventReader().push(frame)).toEqual([
      { event: 'outcome', data: '<tr>\n<td>a</td></tr>' },
    ]);
  });
});
