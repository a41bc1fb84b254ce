/**
 * Versioned topic names (DESIGN.md "Topics"). The record key of every topic is the payment id, so
 * all messages about one payment stay in one partition, in order.
 */
export const TOPICS = {
  commands: 'payments.commands.v1',
  events: 'payments.events.v1',
  gatewayRequests: 'payments.gateway.requests.v1',
  gatewayResults: 'payments.gateway.results.v1',
  gatewayCallbacks: 'payments.gateway.callbacks.v1',
  /** Operators' actions through the admin API, one audit event each (key: the saga id). */
  adminAudit: 'payments.admin.audit.v1',
  /** `reconcile` commands: start a reconciliation run (key: the run id). */
  reconciliationCommands: 'payments.reconciliation.commands.v1',
  /** What reconciliation runs find: mismatches, then one completion per run (key: the run id). */
  reconciliation: 'payments.reconciliation.v1',
} as const;

export type TopicKey = keyof typeof TOPICS;
export type Topic = (typeof TOPICS)[TopicKey];

export const DLQ_SUFFIX = '.dlq';

export type DlqTopic<T extends string = Topic> = `${T}${typeof DLQ_SUFFIX}`;

/** The dead-letter topic of a consumed topic: `<topic>.dlq`. */
export function dlqTopic<T extends string>(topic: T): DlqTopic<T> {
  if (topic.endsWith(DLQ_SUFFIX)) {
    throw new Error(`"${topic}" is already a dead-letter topic`);
  }
  return `${topic}${DLQ_SUFFIX}`;
}

export function isDlqTopic(topic: string): boolean {
  return topic.endsWith(DLQ_SUFFIX);
}

export const ALL_TOPICS: readonly Topic[] = Object.values(TOPICS);
