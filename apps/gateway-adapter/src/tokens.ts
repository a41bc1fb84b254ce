/** Injection tokens of the adapter's boot-time objects. */
export const GATEWAY_ENDPOINTS = Symbol('GATEWAY_ENDPOINTS');
export const CARD_OPENER = Symbol('CARD_OPENER');
export const ADAPTER_CLOCK = Symbol('ADAPTER_CLOCK');
