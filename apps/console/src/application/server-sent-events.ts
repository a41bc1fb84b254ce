/** One server-sent event as read off a stream: its name (default `message`) and its data. */
export interface ServerSentEvent {
  readonly event: string;
  readonly data: string;
}

/** Longest frame kept while waiting for its end: a stream that never ends a frame is cut off. */
const MAX_FRAME_CHARS = 64 * 1024;

/**
 * Reads `text/event-stream` chunk by chunk (frames end with a blank line; comment lines, `id:`
 * and `retry:` are skipped). Throws on a frame longer than MAX_FRAME_CHARS.
 */
export class ServerSentEventReader {
  private buffer = '';

  push(chunk: string): ServerSentEvent[] {
    this.buffer += chunk.replace(/\r\n?/g, '\n');
    const events: ServerSentEvent[] = [];
    for (let end = this.buffer.indexOf('\n\n'); end !== -1; end = this.buffer.indexOf('\n\n')) {
      const frame = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      let event = 'message';
      const data: string[] = [];
      for (const line of frame.split('\n')) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      if (data.length > 0) events.push({ event, data: data.join('\n') });
    }
    if (this.buffer.length > MAX_FRAME_CHARS) throw new Error('server-sent event frame too long');
    return events;
  }
}

/** One frame to write; the data's line breaks become separate `data:` lines, as the format wants. */
export function serverSentEvent(event: string, data: string): string {
  return `event: ${event}\n${data
    .split(/\r\n|\r|\n/)
    .map((line) => `data: ${line}`)
    .join('\n')}\n\n`;
}
