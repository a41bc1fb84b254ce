/**
 * One line per event for `payments tail`: time, type, saga, version and the fields an operator
 * looks for (amounts in minor units with their currency, never converted). Pure.
 */

const NOTABLE = [
  'operation',
  'status',
  'reason',
  'code',
  'gatewayOrderId',
  'cycle',
  'attempt',
  'approvalCode',
] as const;

function isMoney(value: unknown): value is { minor: number; currency: string } {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { minor?: unknown }).minor === 'number' &&
    typeof (value as { currency?: unknown }).currency === 'string'
  );
}

export interface LineInput {
  readonly time: string;
  readonly subject: string;
  readonly event: Readonly<Record<string, unknown>>;
}

export function eventLine({ time, subject, event }: LineInput): string {
  const parts = [time, String(event.type), subject];
  if (typeof event.version === 'number') parts.push(`v${event.version}`);
  for (const [name, value] of Object.entries(event)) {
    if (isMoney(value)) parts.push(`${name}=${value.minor} ${value.currency} (minor units)`);
  }
  for (const name of NOTABLE) {
    const value = event[name];
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
      parts.push(`${name}=${String(value)}`);
    }
  }
  const action = event.action as { kind?: unknown } | undefined;
  if (typeof action?.kind === 'string') parts.push(`action=${action.kind}`);
  return parts.join('  ');
}
