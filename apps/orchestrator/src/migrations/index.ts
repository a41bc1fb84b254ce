import type { MigrationClass } from '@payments/database';
import { OutboxInbox1767225600000 } from './1767225600000-outbox-inbox';
import { Payments1767312000000 } from './1767312000000-payments';
import { Sagas1767600000000 } from './1767600000000-sagas';
import { CommandRejections1767700000000 } from './1767700000000-command-rejections';
import { AdminAudit1767800000000 } from './1767800000000-admin-audit';
import { Reconciliation1767900000000 } from './1767900000000-reconciliation';
import { ReconciliationLookups1768200000000 } from './1768200000000-reconciliation-lookups';
import { TimerTraceparent1768300000000 } from './1768300000000-timer-traceparent';
import { SagaTimeIndexes1769700000000 } from './1769700000000-saga-time-indexes';
import { SagaOrderIndex1769720000000 } from './1769720000000-saga-order-index';
import { DeadLetterReplays1769800000000 } from './1769800000000-dead-letter-replays';
import { TimerScope1769810000000 } from './1769810000000-timer-scope';
import { AdminTokens1769860000000 } from './1769860000000-admin-tokens';
import { ReconciliationHolds1769870000000 } from './1769870000000-reconciliation-holds';
import { Cases1769880000000 } from './1769880000000-cases';
import { Journal1769890000000 } from './1769890000000-journal';
import { MerchantSequences1769890000001 } from './1769890000001-merchant-sequences';
import { CaseAudit1769900000001 } from './1769900000001-case-audit';
import { DayCloseReports1769910000000 } from './1769910000000-day-close-reports';

/** Every migration of the orchestrator's database, oldest first. Append; never edit an applied one. */
export const orchestratorMigrations: readonly MigrationClass[] = [
  OutboxInbox1767225600000,
  Payments1767312000000,
  Sagas1767600000000,
  CommandRejections1767700000000,
  AdminAudit1767800000000,
  Reconciliation1767900000000,
  ReconciliationLookups1768200000000,
  TimerTraceparent1768300000000,
  SagaTimeIndexes1769700000000,
  SagaOrderIndex1769720000000,
  DeadLetterReplays1769800000000,
  TimerScope1769810000000,
  AdminTokens1769860000000,
  ReconciliationHolds1769870000000,
  Cases1769880000000,
  Journal1769890000000,
  MerchantSequences1769890000001,
  CaseAudit1769900000001,
  DayCloseReports1769910000000,
];
