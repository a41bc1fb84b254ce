export const CALLBACK_METRICS = Symbol('CALLBACK_METRICS');
export const CONTROL_KEYS = Symbol('CONTROL_KEYS');
export const HINT_LIMITER = Symbol('HINT_LIMITER');
