/** Stable error codes raised by the library before anything is sent (or by the parsers). */
export type GatewayClientErrorCode =
  | 'invalid-config'
  | 'invalid-key'
  | 'invalid-request'
  | 'invalid-amount'
  | 'invalid-currency'
  | 'invalid-callback'
  | 'invalid-reply';

export class GatewayClientError extends Error {
  override readonly name = 'GatewayClientError';
  constructor(
    readonly code: GatewayClientErrorCode,
    message: string,
    readonly details: { readonly field?: string } = {},
  ) {
    super(message);
  }
}
