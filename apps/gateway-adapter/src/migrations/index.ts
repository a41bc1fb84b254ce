import type { MigrationClass } from '@payments/database';
import { AdapterSentRequests1767400000000 } from './1767400000000-adapter-sent-requests';

/** Every migration of the adapter's database, oldest first. Append; never edit an applied one. */
export const adapterMigrations: readonly MigrationClass[] = [AdapterSentRequests1767400000000];
