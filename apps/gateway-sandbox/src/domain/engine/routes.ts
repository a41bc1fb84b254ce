import { OperationName } from '../operations';
import { cardPayment } from './families/card-payments';
import { cardInfo, createCardRef, createRecurring, rebill } from './families/card-refs-recurring';
import { capture, returnOrder, voidOrder } from './families/follow-ups';
import { formPayment } from './families/hosted-forms';
import {
  panEligibility,
  payout,
  payoutPay,
  transfer,
  transferByRef,
} from './families/payouts-transfers';
import { status } from './families/status';
import { uploadCres, uploadMethodResult, uploadPares } from './families/three-ds';
import { EngineRequest, Reply } from './model';
import { OrderStore } from './order-store';

/** One API operation's handling: it checks the request, changes the store, and replies. */
export type Handler = (store: OrderStore, request: EngineRequest) => Reply;

/**
 * The engine's operation table: for each of the gateway's 27 operations the family handler that
 * performs it. The engine looks a request up here and has no branch per operation; a new
 * operation is a row (the table does not compile with one missing).
 */
export const ROUTES: Readonly<Record<OperationName, Handler>> = {
  // card payments
  SALE: (s, r) => cardPayment(s, r, 'sale'),
  PREAUTH: (s, r) => cardPayment(s, r, 'preauth'),
  ACCOUNT_VERIFICATION: (s, r) => cardPayment(s, r, 'account-verification'),
  // hosted forms
  SALEFORM: (s, r) => formPayment(s, r, 'sale'),
  PAYMENTFORM: (s, r) => formPayment(s, r, r.endpoint.paymentForm),
  PREAUTHFORM: (s, r) => formPayment(s, r, 'preauth'),
  ACCOUNT_VERIFICATION_FORM: (s, r) => formPayment(s, r, 'account-verification'),
  PAYOUTFORM: (s, r) => formPayment(s, r, 'payout'),
  // follow-ups
  CAPTURE: capture,
  VOID: voidOrder,
  RETURN: returnOrder,
  // status
  STATUS: status,
  // card references and recurring
  CARDREF: createCardRef,
  CARDREF_V4: createCardRef,
  CARDINFO: cardInfo,
  REBILL: rebill,
  CREATE_RP_V4: createRecurring,
  // payouts and transfers
  PAYOUT: (s, r) => payout(s, r, 'payout'),
  PAYOUT_V4: (s, r) => payout(s, r, 'payout'),
  PAYOUT_V4_CHECK: (s, r) => payout(s, r, 'payout-two-step'),
  PAYOUT_V4_PAY: payoutPay,
  TRANSFER_V4: transfer,
  TRANSFER_BY_REF_V4: transferByRef,
  PAN_ELIGIBILITY_SEND: panEligibility,
  // 3-D Secure
  TDS_UPLOAD_METHOD_URL_RESULT: uploadMethodResult,
  TDS_UPLOAD_CRES_RESULT: uploadCres,
  TDS_UPLOAD_PARES_RESULT: uploadPares,
};
