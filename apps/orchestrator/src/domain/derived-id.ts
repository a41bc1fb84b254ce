/**
 * derivedUuid lives in @payments/core (callback-ingest derives command ids with it too); the
 * orchestrator's domain re-exports it so its flows keep one import path.
 */
export { derivedUuid } from '@payments/core';
