import type { MigrationClass } from '@payments/database';
import { OutboxInbox1767225600000 } from './1767225600000-outbox-inbox';

/** Every migration of the orchestrator's database, oldest first. Append; never edit an applied one. */
export const orchestratorMigrations: readonly MigrationClass[] = [OutboxInbox1767225600000];
