/** The journal: double-entry lines for the outcome events that move money (pure). */
export * from './accounts';
export * from './posting-rules';
export * from './merchant-day';
export * from './close-report';
