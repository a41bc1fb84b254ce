export { decideTransfer } from './decide';
export { evolveTransfer } from './evolve';
export {
  initialTransferState,
  type TransferDomainCommand,
  type TransferEffect,
  type TransferInput,
  type TransferPolicy,
  type TransferState,
} from './model';
