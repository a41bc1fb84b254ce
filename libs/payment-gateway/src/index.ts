/**
 * Public API of @payments/payment-gateway — a framework-free, signed client for the card-payment
 * gateway (see README.md). The Nest adapter lives in `./nest` and is imported separately.
 */
export {
  OPERATIONS,
  OPERATION_IDS,
  getOperation,
  type AuthScheme,
  type ControlInput,
  type Family,
  type FieldKind,
  type FieldMap,
  type FieldSpec,
  type OperationDef,
  type OperationId,
  type Operations,
  type ReplyKind,
  type ReplyKindOf,
  type RequestFields,
  type RequestOf,
  type Sensitivity,
} from './catalogue';
export {
  PaymentGatewayClient,
  createPaymentGatewayClient,
  type CallOptions,
  type OperationCall,
  type PaymentGatewayClientConfig,
  type RedactedRequestEvent,
  type RedactedResponseEvent,
  type ReplyOf,
} from './client';
export {
  parseAndVerifyCallback,
  parseCallback,
  verifyCallbackControl,
  type CallbackNotification,
  type CallbackType,
  type ParseCallbackOptions,
} from './callbacks';
export {
  compareBytes,
  formEncode,
  parameterPairs,
  normalizeParameters,
  percentDecode,
  percentEncode,
  type FormParams,
} from './encoding';
export { GatewayClientError, type GatewayClientErrorCode } from './errors';
export {
  assertMinorUnits,
  checkCurrencyExponents,
  currencyExponent,
  formatMinorUnits,
  isKnownCurrency,
  parseMajorUnits,
  toWireAmount,
  wireExponent,
  type CurrencyExponents,
  type WireAmount,
} from './money';
export {
  REPLY_RULES,
  classifyExchange,
  classifyTransportError,
  replyVerdict,
  type Accepted,
  type CallResult,
  type Classified,
  type ClassifiedOperation,
  type ErrorClass,
  type NotSent,
  type NotSentReason,
  type Outcome,
  type RejectReason,
  type Rejected,
  type ReplyFacts,
  type ReplyRule,
  type ReplyVerdict,
  type Unknown,
  type UnknownReason,
} from './outcome';
export { maskPan, redactFields, redactHeaders, redactReply, redactRequest } from './redaction';
export {
  GATEWAY_STATUSES,
  decodeReplyBody,
  isFinalStatus,
  normalizeStatus,
  parseReply,
  type AsyncFormResponse,
  type AsyncResponse,
  type CardInfoResponse,
  type CardRefResponse,
  type CreateRecurringPaymentResponse,
  type ErrorLikeReply,
  type ErrorReply,
  type GatewayStatus,
  type ParsedReply,
  type RawReply,
  type ReplyByKind,
  type ReplyEnvelope,
  type StatusResponse,
  type SuccessReply,
  type ValidationErrorReply,
} from './replies';
export {
  ACCEPT,
  prepareRequest,
  type EndpointRef,
  type ReplyFormat,
  type PreparedRequest,
  type SigningContext,
} from './request';
export { controlChecksum, controlMatches } from './signers/control';
export { MIN_RSA_BITS, loadRsaPrivateKey } from './signers/keys';
export {
  hmacSha1Signer,
  randomNonce,
  rsaSha256Signer,
  signOAuthRequest,
  type OAuthSignInput,
  type OAuthSignOutput,
  type OAuthSignatureMethod,
  type OAuthSigner,
} from './signers/oauth';
export {
  DEFAULT_TRANSPORT,
  GatewayTransport,
  poolOptions,
  type TransportOptions,
} from './transport';
