import { z } from 'zod';
import { AdminActionAudited, CaseStepAudited } from './admin';
import {
  ReconcileCommand,
  ReconciliationCompleted,
  ReconciliationMismatch,
} from './reconciliation';
import { CE_HEADERS, CE_SOURCES, CE_SPECVERSION, ceType, REQUIRED_CE_HEADERS } from './cloudevents';
import { ALL_COMMAND_SCHEMAS, ALL_EVENT_SCHEMAS } from './flow-families';
import {
  GATEWAY_REQUEST_SCHEMAS,
  GatewayCallback,
  GatewayResult,
  requestOperations,
  StatusCheckHint,
} from './gateway';
import { RejectionCode } from './rejection-codes';
import { TOPICS } from './topics';

/**
 * The AsyncAPI 3.0 description of our topics, built from the zod schemas so it cannot drift.
 * `npm run asyncapi:generate` writes it to docs/asyncapi/asyncapi.json; a unit test fails when the
 * published file differs from a fresh build.
 */
type JsonObject = Record<string, unknown>;

const KAFKA_BINDING_VERSION = '0.5.0';

function jsonSchema(schema: z.ZodType): JsonObject {
  const out = z.toJSONSchema(schema, { target: 'draft-7', io: 'input' }) as JsonObject;
  delete out.$schema;
  return out;
}

const pascal = (s: string) =>
  s
    .split(/[-_.\s]/)
    .filter(Boolean)
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join('');

interface MessageSpec {
  /** key under components.messages / components.schemas */
  name: string;
  title: string;
  schema: z.ZodType;
  ceType: string;
  ceSource: string;
}

const cloudEventHeaders = (type: string, source: string): JsonObject => ({
  type: 'object',
  required: [...REQUIRED_CE_HEADERS, CE_HEADERS.contentType],
  properties: {
    [CE_HEADERS.specversion]: { type: 'string', const: CE_SPECVERSION },
    [CE_HEADERS.id]: {
      type: 'string',
      description: 'Stable across redelivery (the outbox row id); consumers deduplicate on it.',
    },
    [CE_HEADERS.type]: { type: 'string', const: type },
    [CE_HEADERS.source]: { type: 'string', examples: [source] },
    [CE_HEADERS.subject]: { type: 'string', format: 'uuid', description: 'The payment id.' },
    [CE_HEADERS.time]: { type: 'string', format: 'date-time' },
    [CE_HEADERS.contentType]: { type: 'string', const: 'application/json' },
    [CE_HEADERS.traceparent]: {
      type: 'string',
      pattern: '^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$',
      description: 'W3C Trace Context.',
    },
    [CE_HEADERS.tracestate]: { type: 'string' },
  },
});

const commandMessages: MessageSpec[] = Object.entries(ALL_COMMAND_SCHEMAS).map(
  ([type, schema]) => ({
    name: `${pascal(type)}Command`,
    title: `${type} command`,
    schema,
    ceType: ceType.command(type),
    ceSource: '/merchant-platform/<service>',
  }),
);

const eventMessages: MessageSpec[] = Object.entries(ALL_EVENT_SCHEMAS).map(([type, schema]) => ({
  name: `${pascal(type)}Event`,
  title: `${type} event`,
  schema,
  ceType: ceType.event(type),
  ceSource: CE_SOURCES.orchestrator,
}));

/**
 * One message per gateway request schema (`GATEWAY_REQUEST_SCHEMAS`, the request union's table):
 * a new request schema is in the document as soon as it is in the union.
 */
const requestMessages: MessageSpec[] = Object.entries(GATEWAY_REQUEST_SCHEMAS).map(
  ([name, schema]) => {
    const operations = requestOperations(schema);
    return {
      name,
      title: `${operations.join(', ')} request`,
      schema,
      ceType: ceType.gatewayRequest(operations.length === 1 ? operations[0] : '<operation>'),
      ceSource: CE_SOURCES.orchestrator,
    };
  },
);

const resultMessages: MessageSpec[] = [
  {
    name: 'GatewayResult',
    title: 'classified gateway result',
    schema: GatewayResult,
    ceType: ceType.gatewayResult('<operation>'),
    ceSource: CE_SOURCES.gatewayAdapter,
  },
];

const callbackMessages: MessageSpec[] = [
  {
    name: 'GatewayCallback',
    title: 'verified gateway notification',
    schema: GatewayCallback,
    ceType: ceType.callback('callback'),
    ceSource: CE_SOURCES.callbackIngest,
  },
  {
    name: 'StatusCheckHint',
    title: 'unverified notification: status check hint',
    schema: StatusCheckHint,
    ceType: ceType.callback('status-check-hint'),
    ceSource: CE_SOURCES.callbackIngest,
  },
];

const adminAuditMessages: MessageSpec[] = [
  {
    name: 'AdminActionAudited',
    title: 'an operator action through the admin API',
    schema: AdminActionAudited,
    ceType: ceType.admin('admin-action-audited'),
    ceSource: CE_SOURCES.admin,
  },
  {
    name: 'CaseStepAudited',
    title:
      'a step of a case: opened, evidence added, proposed, approved, rejected, closed, reopened',
    schema: CaseStepAudited,
    ceType: ceType.admin('case-step-audited'),
    ceSource: CE_SOURCES.admin,
  },
];

const reconcileCommandMessages: MessageSpec[] = [
  {
    name: 'ReconcileCommand',
    title: 'start a reconciliation run over a time window',
    schema: ReconcileCommand,
    ceType: ceType.command('reconcile'),
    ceSource: CE_SOURCES.admin,
  },
];

const reconciliationMessages: MessageSpec[] = [
  {
    name: 'ReconciliationMismatch',
    title: "a saga whose final state differs from the gateway's status reply",
    schema: ReconciliationMismatch,
    ceType: ceType.reconciliation('reconciliation-mismatch'),
    ceSource: CE_SOURCES.reconciliation,
  },
  {
    name: 'ReconciliationCompleted',
    title: 'a reconciliation run is over: its counts',
    schema: ReconciliationCompleted,
    ceType: ceType.reconciliation('reconciliation-completed'),
    ceSource: CE_SOURCES.reconciliation,
  },
];

interface ChannelSpec {
  id: string;
  address: string;
  description: string;
  messages: MessageSpec[];
  /** From the orchestrator's point of view. */
  action: 'send' | 'receive';
}

const channels: ChannelSpec[] = [
  {
    id: 'commands',
    address: TOPICS.commands,
    description: 'Payment commands from internal services.',
    messages: commandMessages,
    action: 'receive',
  },
  {
    id: 'events',
    address: TOPICS.events,
    description:
      'The authoritative lifecycle and outcome events of payments, per payment in version order.',
    messages: eventMessages,
    action: 'send',
  },
  {
    id: 'gatewayRequests',
    address: TOPICS.gatewayRequests,
    description: 'One gateway operation for the gateway-adapter to perform.',
    messages: requestMessages,
    action: 'send',
  },
  {
    id: 'gatewayResults',
    address: TOPICS.gatewayResults,
    description: 'The classified result of a gateway request.',
    messages: resultMessages,
    action: 'receive',
  },
  {
    id: 'gatewayCallbacks',
    address: TOPICS.gatewayCallbacks,
    description: 'Verified gateway notifications and status-check hints.',
    messages: callbackMessages,
    action: 'receive',
  },
  {
    id: 'adminAudit',
    address: TOPICS.adminAudit,
    description:
      'One event per operator action through the admin API (who, role, why, the command sent).',
    messages: adminAuditMessages,
    action: 'send',
  },
  {
    id: 'reconciliationCommands',
    address: TOPICS.reconciliationCommands,
    description: 'Start a reconciliation run (on demand: an operator, the CLI, a job).',
    messages: reconcileCommandMessages,
    action: 'receive',
  },
  {
    id: 'reconciliation',
    address: TOPICS.reconciliation,
    description:
      "What reconciliation runs find: one event per saga that differs from the gateway's answer, then the run's counts.",
    messages: reconciliationMessages,
    action: 'send',
  },
];

const ref = (path: string) => ({ $ref: path });

export function buildAsyncApiDocument(): JsonObject {
  const schemas: JsonObject = { RejectionCode: jsonSchema(RejectionCode) };
  const messages: JsonObject = {};
  const channelObjects: JsonObject = {};
  const operations: JsonObject = {};

  for (const channel of channels) {
    const channelMessages: JsonObject = {};
    for (const m of channel.messages) {
      schemas[m.name] = jsonSchema(m.schema);
      schemas[`${m.name}Headers`] = cloudEventHeaders(m.ceType, m.ceSource);
      messages[m.name] = {
        name: m.name,
        title: m.title,
        contentType: 'application/json',
        headers: ref(`#/components/schemas/${m.name}Headers`),
        payload: ref(`#/components/schemas/${m.name}`),
        bindings: {
          kafka: {
            key: { type: 'string', format: 'uuid', description: 'The payment id.' },
            bindingVersion: KAFKA_BINDING_VERSION,
          },
        },
      };
      channelMessages[m.name] = ref(`#/components/messages/${m.name}`);
    }
    channelObjects[channel.id] = {
      address: channel.address,
      description: `${channel.description} Dead letters go to \`${channel.address}.dlq\`.`,
      messages: channelMessages,
      bindings: { kafka: { bindingVersion: KAFKA_BINDING_VERSION } },
    };
    operations[`${channel.action}${pascal(channel.id)}`] = {
      action: channel.action,
      channel: ref(`#/channels/${channel.id}`),
      messages: channel.messages.map((m) => ref(`#/channels/${channel.id}/messages/${m.name}`)),
    };
  }

  return {
    asyncapi: '3.0.0',
    info: {
      title: 'Payments orchestrator',
      version: '1.0.0',
      description:
        "Kafka topics of the payment orchestration service. Values are JSON; headers follow the CloudEvents 1.0 Kafka binding in binary mode plus W3C traceparent. Record keys are payment ids. Operations are described from the orchestrator's point of view. Generated from libs/contracts; do not edit by hand.",
    },
    defaultContentType: 'application/json',
    channels: channelObjects,
    operations,
    components: { schemas, messages },
  };
}
