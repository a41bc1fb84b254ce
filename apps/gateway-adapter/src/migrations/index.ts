import type { MigrationClass } from '@payments/database';
import { AdapterSentRequests1767400000000 } from './1767400000000-adapter-sent-requests';
import { OneLiveAttemptPerRequest1769610000000 } from './1769610000000-one-live-attempt-per-request';
import { RequestHandoffs1769700000000 } from './1769700000000-request-handoffs';

/** Every migration of the adapter's database, oldest first. Append; never edit an applied one. */
export const adapterMigrations: readonly MigrationClass[] = [
  AdapterSentRequests1767400000000,
  OneLiveAttemptPerRequest1769610000000,
  RequestHandoffs1769700000000,
];
