/**
 * @payments/sdk — produce commands to and consume outcome events from the payments service.
 * See README.md.
 */
export {
  COMMAND_TYPES,
  EVENT_TYPES,
  isCommandType,
  isEventType,
  sagaIdOf,
  type Command,
  type CommandOf,
  type CommandType,
  type EventOf,
  type EventType,
  type OutcomeEvent,
} from './catalogue';
export { type ConnectionOptions } from './connection';
export { EventSchemaMismatchError, InvalidCommandError } from './errors';
export {
  decodeEvent,
  EventGate,
  type EventHandlers,
  type EventMeta,
  type GateVerdict,
  MemorySeenStore,
  type SeenStore,
} from './event-gate';
export { PaymentsEventConsumer, type PaymentsEventConsumerOptions } from './consumer';
export {
  type CommandInput,
  PaymentsProducer,
  type PaymentsProducerOptions,
  type SentCommand,
} from './producer';
export { Card, TOPICS } from '@payments/contracts';
export { DayTally, type DayTallyVerdict, type TallyDifference } from './day-tally';
