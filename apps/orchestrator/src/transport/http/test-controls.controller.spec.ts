import { BadRequestException } from '@nestjs/common';
import { ControllableClock } from '../../runtime/controllable-clock';
import { TestControlsController } from './test-controls.controller';

describe('TestControlsController', () => {
  it('moves the orchestrator clock forward by whole seconds and answers the new now', () => {
    const clock = new ControllableClock();
    const controller = new TestControlsController(clock);
    const before = Date.parse(controller.now().now);
    const { now } = controller.advance({ seconds: 31 * 86_400 });
    expect(Date.parse(now) - before).toBeGreaterThanOrEqual(31 * 86_400_000);
    expect(Date.parse(controller.now().now)).toBeGreaterThanOrEqual(Date.parse(now));
  });

  it('answers 400 to anything but {"seconds": whole number}', () => {
    const controller = new TestControlsController(new ControllableClock());
    for (const body of [
      {},
      { seconds: -1 },
      { seconds: 1.5 },
      { seconds: '60' },
      { seconds: 1, x: 1 },
    ]) {
      expect(() => controller.advance(body)).toThrow(BadRequestException);
    }
  });
});
