/**
 * Asks `probe` every `everyMs` until it answers something other than `undefined` or `false`, and
 * returns that answer; throws `timed out waiting for <what>` once `timeoutMs` has passed. For
 * stack tests waiting on a condition (never a sleep standing in for one).
 */
export async function waitUntil<T>(
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  what: string,
  { timeoutMs = 60_000, everyMs = 200 }: { timeoutMs?: number; everyMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
