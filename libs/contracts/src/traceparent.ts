import { randomBytes } from 'node:crypto';

/** W3C Trace Context `traceparent`: `00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>`. */
export interface TraceParent {
  version: string;
  traceId: string;
  parentId: string;
  flags: string;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

export function parseTraceparent(value: string): TraceParent | undefined {
  const m = TRACEPARENT.exec(value.trim());
  if (!m) return undefined;
  const [, version, traceId, parentId, flags, rest] = m as unknown as [
    string,
    string,
    string,
    string,
    string,
    string | undefined,
  ];
  // Version ff is forbidden; version 00 allows nothing after the flags; all-zero ids are invalid.
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  if (/^0+$/.test(traceId) || /^0+$/.test(parentId)) return undefined;
  return { version, traceId, parentId, flags };
}

export function isValidTraceparent(value: string): boolean {
  return parseTraceparent(value) !== undefined;
}

export function formatTraceparent(tp: TraceParent): string {
  return `00-${tp.traceId}-${tp.parentId}-${tp.flags}`;
}

type RandomHex = (bytes: number) => string;
const cryptoHex: RandomHex = (bytes) => randomBytes(bytes).toString('hex');

function nonZeroHex(bytes: number, random: RandomHex): string {
  for (;;) {
    const hex = random(bytes);
    if (!/^0+$/.test(hex)) return hex;
  }
}

/** A new trace (root span), sampled. */
export function newTraceparent(random: RandomHex = cryptoHex): string {
  return formatTraceparent({
    version: '00',
    traceId: nonZeroHex(16, random),
    parentId: nonZeroHex(8, random),
    flags: '01',
  });
}

/** A child span of `parent`: same trace id and flags, new span id. Starts a new trace if `parent` is absent or invalid. */
export function childTraceparent(
  parent: string | undefined,
  random: RandomHex = cryptoHex,
): string {
  const tp = parent === undefined ? undefined : parseTraceparent(parent);
  if (!tp) return newTraceparent(random);
  return formatTraceparent({ ...tp, version: '00', parentId: nonZeroHex(8, random) });
}
