import type { InputMeta } from '../../runtime/outbox/outbox-rows';

/**
 * What the orchestrator keeps of a consumed message's headers (decoded to strings by libs/kafka):
 * its traceparent, so what the change writes continues the message's trace. Beside the transport
 * that reads the headers; the runtime only sees the `InputMeta` it makes.
 */
export function inputMeta(headers: Readonly<Record<string, string>>): InputMeta {
  const traceparent = headers.traceparent;
  return traceparent === undefined ? {} : { traceparent };
}
