/**
 * The line of one class of status queries held back by an endpoint's status budget (issue #38:
 * no operation starved for good). A payment held gets a place at the end of its class's line and
 * a turn, `spacingMs` (one token of the class's rate) after the turn before it; its `retryAt` is
 * that turn. A place is *due* from its turn until `claimMs` after the last `retryAt` it was
 * given: a payment asking without a place (a newcomer), or before its turn, is admitted only
 * while no place of its class is due, so those held earlier go first whatever order a timer
 * batch brings them in. Among due places, one whose payment came back and was held again goes
 * before those taken after it (first come back, first served, in the order the places were
 * taken); a place whose payment never comes back (its operation settled meanwhile) holds no due
 * payment back and newcomers for at most `claimMs`; a place that lapsed is forgotten. Pure:
 * times are passed in.
 */
interface Place {
  readonly turnAt: number;
  liveUntil: number;
  /** Held again once its turn had come: its payment is still asking, it goes before later ones. */
  returned: boolean;
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

  /**
   * Whether `paymentId` may take a token now: it holds a due place and no payment that took its
   * place earlier came back and is still waiting; or no place is due.
   */
  mayGo(paymentId: string, now: number): boolean {
    this.forget(now);
    const own = this.places.get(paymentId);
    const due = (place: Place) => place.turnAt <= now && now <= place.liveUntil;
    if (own !== undefined && own.turnAt <= now) {
      for (const [other, place] of this.places) {
        if (other === paymentId) return true;
        if (place.returned && due(place)) return false;
      }
      return true;
    }
    for (const place of this.places.values()) if (due(place)) return false;
    return true;
  }

  /** Admitted: its place (if any) is given up. */
  admitted(paymentId: string): void {
    this.places.delete(paymentId);
  }

  /**
   * Held back (`gateAt`: when the class's tokens next allow one; `now` if only the line held
   * it): keeps its place, or takes one at the end; answers its `retryAt`.
   */
  held(paymentId: string, now: number, gateAt: number): number {
    this.forget(now);
    const own = this.places.get(paymentId);
    if (own !== undefined) {
      const retryAt = Math.max(gateAt, own.turnAt, now);
      if (own.turnAt <= now) own.returned = true;
      own.liveUntil = Math.max(own.liveUntil, retryAt + this.claimMs);
      return retryAt;
    }
    let live = 0;
    for (const place of this.places.values()) if (now <= place.liveUntil) live += 1;
    const turnAt = Math.max(gateAt, now) + this.spacingMs * live;
    this.places.set(paymentId, { turnAt, liveUntil: turnAt + this.claimMs, returned: false });
    return turnAt;
  }

  private forget(now: number): void {
    for (const [paymentId, place] of this.places)
      if (place.liveUntil + this.rememberMs < now) this.places.delete(paymentId);
  }
}
