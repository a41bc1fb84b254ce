import { AdminAuditEntity } from './admin-audit.entity';
import { CommandEntity } from './command.entity';
import { DeadLetterReplayEntity } from './dead-letter-replay.entity';
import { GatewayRequestEntity } from './gateway-request.entity';
import { InboxEntity } from './inbox.entity';
import { OutboxEntity } from './outbox.entity';
import { ReconciliationCheckEntity, ReconciliationRunEntity } from './reconciliation.entity';
import { SagaHistoryEntity } from './saga-history.entity';
import { SagaEntity } from './saga.entity';
import { TimerEntity } from './timer.entity';

export {
  AdminAuditEntity,
  CommandEntity,
  DeadLetterReplayEntity,
  GatewayRequestEntity,
  InboxEntity,
  OutboxEntity,
  ReconciliationCheckEntity,
  ReconciliationRunEntity,
  SagaEntity,
  SagaHistoryEntity,
  TimerEntity,
};

/** Every table of the orchestrator's database; the schema itself comes from the migrations. */
export const orchestratorEntities = [
  SagaEntity,
  SagaHistoryEntity,
  CommandEntity,
  GatewayRequestEntity,
  TimerEntity,
  OutboxEntity,
  InboxEntity,
  AdminAuditEntity,
  ReconciliationRunEntity,
  ReconciliationCheckEntity,
  DeadLetterReplayEntity,
];
