import { freePort, reservePort } from './processes';

describe('freePort reserves what it hands out across the test processes of this machine', () => {
  it('a port handed out is not handed out again while its reservation is young, even when the kernel calls it free', async () => {
    const port = await freePort();
    // The kernel would call it free again (nothing listens on it yet): the reservation says no.
    expect(reservePort(port)).toBe(false);
    const others = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    expect(new Set([port, ...others]).size).toBe(21);
  });

  it('a stale reservation (older than 15 minutes) gives the port back', async () => {
    const port = await freePort();
    expect(reservePort(port, Date.now() + 16 * 60_000)).toBe(true);
  });
});
