/** The recurring-schedule decider: calendar, state, decide, evolve. */
export * from './calendar';
export * from './decide';
export * from './evolve';
export * from './gateway-charged';
export * from './state';
