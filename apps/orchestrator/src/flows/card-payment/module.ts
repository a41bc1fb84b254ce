import { CARD_PAYMENT_FAMILY, type PaymentEvent, type PaymentOperation } from '@payments/contracts';
import { refreshActions } from '../../domain/admin/admin-actions';
import {
  lifecycleEvents,
  requestReconciliation,
} from '../../domain/reconciliation/flow-reconciliation';
import type { MoneyEventType } from '../../runtime/outcome-metrics';
import type { FlowModule } from '../flow-module';
import { CARD_PAYMENT_FLOW, cardPaymentFlow } from './card-payment.flow';
import { cardPaymentExpectation } from './domain/reconciliation';
import { isMainOperation, type PaymentState } from './domain/state';
import { CARD_PAYMENT_OPERATIONS } from './gateway-vocabulary';
import { cardPaymentPolicy } from './policy';

/** Card payments: sale, preauth and follow-ups, rebills, account verification, card references. */
export const cardPaymentModule: FlowModule = {
  name: CARD_PAYMENT_FLOW,
  family: CARD_PAYMENT_FAMILY,
  flow: (config) => cardPaymentFlow(cardPaymentPolicy(config)),
  reconciliation: requestReconciliation<PaymentState & { clientOrderId?: string }>(
    lifecycleEvents('', {
      requested: 'operation-requested',
      succeeded: ['approved', 'authorized', 'account-verified', 'captured', 'voided', 'returned'],
      opensOrder: (operation) => isMainOperation(operation as PaymentOperation),
      // A universal payment form (the gateway decides): approved was a sale, authorized a hold.
      succeededAs: { approved: 'sale', authorized: 'preauth' },
    }),
    cardPaymentExpectation,
    CARD_PAYMENT_OPERATIONS,
  ),

  // Charged (rebills included), captured, refunded; holds and voids move nothing.
  moneyEvents: ['approved', 'captured', 'returned'] satisfies ReadonlyArray<
    MoneyEventType<PaymentEvent>
  >,
  actions: refreshActions('refresh-status', 'paymentId'),
};
