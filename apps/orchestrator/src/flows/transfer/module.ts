import { TRANSFER_FAMILY, type TransferEvent } from '@payments/contracts';
import { refreshActions } from '../../domain/admin/admin-actions';
import {
  lifecycleEvents,
  requestReconciliation,
} from '../../domain/reconciliation/flow-reconciliation';
import type { MoneyEventType } from '../../runtime/outcome-metrics';
import type { FlowModule } from '../flow-module';
import { payoutPolicy } from '../payout/policy';
import type { TransferState } from './domain/model';
import { transferExpectation } from './domain/reconciliation';
import { TRANSFER_FLOW, TRANSFER_OPERATIONS, transferFlow } from './transfer.flow';

/** Card-to-card transfers: transfer and transfer-by-ref (v4). */
export const transferModule: FlowModule = {
  name: TRANSFER_FLOW,
  family: TRANSFER_FAMILY,
  flow: (config) => transferFlow(payoutPolicy(config)),
  reconciliation: requestReconciliation<TransferState & { clientOrderId?: string }>(
    lifecycleEvents('transfer-', { requested: 'transfer-requested', succeeded: ['transferred'] }),
    transferExpectation,
    TRANSFER_OPERATIONS,
  ),

  moneyEvents: ['transferred'] satisfies ReadonlyArray<MoneyEventType<TransferEvent>>,
  actions: refreshActions('refresh-transfer-status', 'transferId'),
};
