import { readdirSync } from 'node:fs';
import path from 'node:path';
import { containsCardNumber } from '@payments/core';

/**
 * A migration's name is a row of every database (`migrations.name`) and its timestamp a run of
 * digits: one that reads as a card number (13–19 digits passing Luhn, e.g. 1769900000000) makes
 * the card-data audit of every e2e suite find a "card number" in the database. Pick another.
 */
describe('migration names', () => {
  const folders = ['apps/orchestrator/src/migrations', 'apps/gateway-adapter/src/migrations'];
  it.each(folders)('%s: no timestamp reads as a card number', (folder) => {
    const names = readdirSync(path.join(__dirname, '..', folder)).filter((f) => /^\d+-/.test(f));
    expect(names.length).toBeGreaterThan(0);
    expect(names.filter((name) => containsCardNumber(name.split('-')[0] ?? ''))).toEqual([]);
  });
});
