import { type SpanScope, startSpan } from '@payments/observability';
import type { ConsumedMessage } from './message';

/**
 * The `process <topic>` span of a consumed message, child of the message's `traceparent`, and
 * the message as the handler gets it: `traceparent` rewritten to that span, so that what the
 * handler writes (`messageTraceparent`) continues from it. Tracing off: the message as it is.
 */
export function consumeSpan(
  groupId: string,
  message: ConsumedMessage<unknown>,
): {
  span: SpanScope;
  message: ConsumedMessage<unknown>;
} {
  const span = startSpan(`process ${message.topic}`, {
    kind: 'consumer',
    ...(message.headers.traceparent === undefined ? {} : { parent: message.headers.traceparent }),
    attributes: {
      'messaging.system': 'kafka',
      'messaging.operation.type': 'process',
      'messaging.destination.name': message.topic,
      'messaging.consumer.group.name': groupId,
      'messaging.destination.partition.id': String(message.partition),
      'messaging.kafka.offset': Number(message.offset),
    },
  });
  const traceparent = span.traceparent;
  return {
    span,
    message:
      traceparent === undefined
        ? message
        : { ...message, headers: { ...message.headers, traceparent } },
  };
}
