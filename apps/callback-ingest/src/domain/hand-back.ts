import { UploadCresResultCommand, UploadParesResultCommand, Uuid } from '@payments/contracts';
import { derivedUuid } from '@payments/core';
import { notificationId } from './notification-id';

export type HandBackCommand = UploadCresResultCommand | UploadParesResultCommand;

/**
 * Own-3DS hand-back (facts §5): at the end of the challenge the ACS posts the payer's browser to
 * `redirect_url` with the CRes (`cres`, or `cRes`; 3-D Secure 2.x) or the PaRes (1.0.2) instead
 * of the signed status return. There is no `control` to verify: the gateway checks the CRes /
 * PaRes when it is uploaded (the transaction id inside must match), and an upload decides nothing
 * by itself, so it is passed on as the command the merchant's front end would have sent:
 * `upload-cres-result` / `upload-pares-result` for the payment `merchant_order` names.
 *
 * The command id is derived from every parameter (a replayed POST is the same command, which the
 * orchestrator deduplicates). Undefined when the request is no hand-back, names no payment, or
 * the value is not a valid upload (the usual unverified-return path then applies).
 */
export function handBackCommand(input: {
  readonly endpointId: string;
  readonly params: Readonly<Record<string, string>>;
  readonly receivedAt: string;
}): HandBackCommand | undefined {
  const { params } = input;
  const paymentId = params.merchant_order ?? params.client_orderid;
  if (paymentId === undefined || !Uuid.safeParse(paymentId).success) return undefined;
  const cRes = params.cres ?? params.cRes;
  const paRes = params.PaRes ?? params.pares ?? params.paRes;
  if (cRes === undefined && paRes === undefined) return undefined;
  const base = {
    commandId: derivedUuid(notificationId('callback', 'browser-return', input.endpointId, params)),
    paymentId,
    merchant: { endpointId: input.endpointId },
    occurredAt: input.receivedAt,
  };
  const parsed =
    cRes !== undefined
      ? UploadCresResultCommand.safeParse({ type: 'upload-cres-result', ...base, cRes })
      : UploadParesResultCommand.safeParse({ type: 'upload-pares-result', ...base, paRes });
  return parsed.success ? parsed.data : undefined;
}
