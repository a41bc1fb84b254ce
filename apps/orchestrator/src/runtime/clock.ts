import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';

/** The time, behind an injected class so tests can move it (STYLE.md: I/O behind classes). */
@Injectable()
export class Clock {
  now(): Date {
    return new Date();
  }
}

/** New ids (uuid v4), for events, requests, outbox rows. */
@Injectable()
export class IdGenerator {
  next(): string {
    return randomUUID();
  }
}
