export { BackgroundLoop, type BackgroundLoopOptions, type RoundOutcome } from './background-loop';
export { maskCardDataInJson, maskCardDataInText } from './card-data';
export {
  CARD_NUMBER_MAX_DIGITS,
  CARD_NUMBER_MIN_DIGITS,
  type CardNumberMatch,
  containsCardNumber,
  findCardNumbers,
  isCardNumber,
  isCardSecurityCodeField,
  luhnValid,
  maskCardNumber,
  maskCardNumbers,
  normalizeFieldName,
} from './card-number';
export { type Clock, ManualClock, systemClock } from './clock';
export { derivedUuid, type IdGenerator, newId, SequentialIds, uuidGenerator } from './ids';
export { sleep, TimeoutError, withTimeout } from './timeout';
export { WakeableSleep } from './wakeable-sleep';
