import { Injectable } from '@nestjs/common';
import { newId, systemClock } from '@payments/core';

/**
 * libs/core's clock and ids as injectable classes (STYLE.md: I/O behind classes), so tests move
 * the time by overriding `now()`. The runtime works with Dates.
 */
@Injectable()
export class Clock {
  now(): Date {
    return new Date(systemClock.now());
  }
}

/** New ids (uuid v4), for events, requests, outbox rows. */
@Injectable()
export class IdGenerator {
  next(): string {
    return newId();
  }
}
