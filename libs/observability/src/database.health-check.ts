import type { DataSource } from 'typeorm';
import type { HealthCheck } from './health-check';
import { withTimeout } from '@payments/core';

/** Readiness of PostgreSQL: `SELECT 1` through the app's DataSource within a short timeout. */
export class DatabaseHealthCheck implements HealthCheck {
  readonly name: string;

  constructor(
    private readonly dataSource: DataSource,
    private readonly timeoutMs = 2000,
    name = 'database',
  ) {
    this.name = name;
  }

  async check(): Promise<void> {
    if (!this.dataSource.isInitialized) throw new Error('not connected');
    try {
      await withTimeout(this.dataSource.query('SELECT 1'), this.timeoutMs, 'SELECT 1');
    } catch (error) {
      // Driver messages can name hosts and users but not passwords; keep only the message.
      throw new Error(error instanceof Error ? error.message : 'query failed');
    }
  }
}
