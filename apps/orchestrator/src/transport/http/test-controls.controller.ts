import { BadRequestException, Body, Controller, Get, HttpCode, Post } from '@nestjs/common';
import { z } from 'zod';
import { ControllableClock } from '../../runtime/controllable-clock';

const Advance = z.strictObject({
  /** How far to move the orchestrator's clock forward (at most a year per call). */
  seconds: z
    .number()
    .int()
    .min(0)
    .max(366 * 86_400),
});

/**
 * Test-only controls, mounted only when TEST_CONTROLS_ENABLED=true (e2e and the demo): the
 * orchestrator's clock, so timers (schedule cycles, dunning retries) come due in seconds.
 */
@Controller('test-controls')
export class TestControlsController {
  constructor(private readonly clock: ControllableClock) {}

  @Get('clock')
  now(): { now: string } {
    return { now: this.clock.now().toISOString() };
  }

  @Post('clock/advance')
  @HttpCode(200)
  advance(@Body() body: unknown): { now: string } {
    const parsed = Advance.safeParse(body);
    if (!parsed.success) {
      throw new BadRequestException({
        code: 'INVALID_REQUEST',
        message: 'expected {"seconds": <whole number 0…31622400>}',
      });
    }
    return { now: this.clock.advance(parsed.data.seconds * 1000).toISOString() };
  }

  /** Back to the system time (the demo before `--keep-running`). */
  @Post('clock/reset')
  @HttpCode(200)
  reset(): { now: string } {
    return { now: this.clock.reset().toISOString() };
  }
}
