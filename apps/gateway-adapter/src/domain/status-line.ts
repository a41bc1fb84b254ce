/**
 * The line of one class of status queries held back by an endpoint's status budget (issue #38:
 * no operation starved for good). A payment held gets a place at the end of its class's line and
 * a turn: one token of the class's rate per live place before it, after the instant the class's
 * tokens next allow one; the budget tells it to come back by then. The token is `spacingMs`, or
 * the spacing the caller gives for now (the background share binds only while other classes ask:
 * its line is spaced by the share's rate then, by the status rate otherwise). Held again, a
 * payment keeps its place and is given a new turn the same way — one token after each place
 * before it whose turn comes by then — so those held earlier are told earlier turns, and a line
 * whose rate fell (the share binding again) spreads out again rather than asking all at once.
 * The line holds no token for anyone: it ranks the payments in the budget's waiting room
 * (`since`: those held earlier go first whenever they are there). A place lapses `claimMs` after
 * its last turn (it no longer counts before later ones) and is remembered `rememberMs` more (a
 * payment coming back late keeps its rank); then it is forgotten. A hinted place (its query
 * names `urgentSince`: a verified callback, a browser return) goes before every unhinted one in
 * the waiting room, so its turn counts only the hinted places before it, and an unhinted place's
 * counts every live hinted place as before it. Pure: times are passed in.
 */
interface Place {
  /** Its turn, or the later one it was given when held again. */
  turnAt: number;
  liveUntil: number;
  /** When it was taken: the payment's rank in the waiting room among those of its class. */
  readonly takenAt: number;
  /** Its query named a hint when last held (a hint comes, or lapses, between two holds). */
  hinted: boolean;
}

export class StatusLine {
  /** In the order they were taken. */
  private readonly places = new Map<string, Place>();

  constructor(
    private readonly spacingMs: number,
    private readonly claimMs: number,
    private readonly rememberMs = 60_000,
  ) {
    if (!(spacingMs > 0) || !(claimMs >= 0) || !(rememberMs >= 0))
      throw new Error('a status line needs spacingMs > 0, claimMs >= 0 and rememberMs >= 0');
  }

  /** Places kept right now (bounded by the payments held within the last `rememberMs`). */
  get size(): number {
    return this.places.size;
  }

  /** When `paymentId` took its place in this line (first held), if it holds one. */
  since(paymentId: string, now: number): number | undefined {
    this.forget(now);
    return this.places.get(paymentId)?.takenAt;
  }

  /** Admitted: its place (if any) is given up. */
  admitted(paymentId: string): void {
    this.places.delete(paymentId);
  }

  /**
   * Held back (`gateAt`: when the class's tokens next allow one; `now` if only the line held
   * it; `spacingMs`: one token of the class's rate now; `hinted`: its query names a hint):
   * keeps its place, or takes one at the end; answers its `retryAt`.
   */
  held(
    paymentId: string,
    now: number,
    gateAt: number,
    spacingMs = this.spacingMs,
    hinted = false,
  ): number {
    if (!(spacingMs > 0)) throw new Error('a status line needs spacingMs > 0');
    this.forget(now);
    const from = Math.max(gateAt, now);
    const own = this.places.get(paymentId);
    if (own !== undefined) {
      // A hint that came since its last turn: that turn counted the unhinted places before it.
      const hintCame = hinted && !own.hinted;
      own.hinted = hinted;
      // Held again: one token after each place going before it whose turn comes by then, so
      // places held again together are told turns one token apart, in line order.
      let turn = from;
      let beforeOwn = true;
      for (const [other, place] of this.places) {
        if (other === paymentId) {
          beforeOwn = false;
          continue;
        }
        const first = place.hinted === hinted ? beforeOwn : place.hinted;
        if (first && now <= place.liveUntil && place.turnAt <= turn) turn += spacingMs;
      }
      const retryAt = hintCame ? turn : Math.max(turn, own.turnAt);
      own.turnAt = retryAt;
      own.liveUntil = Math.max(own.liveUntil, retryAt + this.claimMs);
      return retryAt;
    }
    let before = 0;
    for (const place of this.places.values())
      if (now <= place.liveUntil && (place.hinted || !hinted)) before += 1;
    const turnAt = from + spacingMs * before;
    this.places.set(paymentId, {
      turnAt,
      liveUntil: turnAt + this.claimMs,
      takenAt: now,
      hinted,
    });
    return turnAt;
  }

  private forget(now: number): void {
    for (const [paymentId, place] of this.places)
      if (place.liveUntil + this.rememberMs < now) this.places.delete(paymentId);
  }
}
