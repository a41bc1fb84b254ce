import { CommandEntity } from './command.entity';
import { GatewayRequestEntity } from './gateway-request.entity';
import { InboxEntity } from './inbox.entity';
import { OutboxEntity } from './outbox.entity';
import { PaymentHistoryEntity } from './payment-history.entity';
import { PaymentEntity } from './payment.entity';
import { TimerEntity } from './timer.entity';

export {
  CommandEntity,
  GatewayRequestEntity,
  InboxEntity,
  OutboxEntity,
  PaymentEntity,
  PaymentHistoryEntity,
  TimerEntity,
};
export type { StoredTimerKind } from './timer.entity';

/** Every table of the orchestrator's database; the schema itself comes from the migrations. */
export const orchestratorEntities = [
  PaymentEntity,
  PaymentHistoryEntity,
  CommandEntity,
  GatewayRequestEntity,
  TimerEntity,
  OutboxEntity,
  InboxEntity,
];
