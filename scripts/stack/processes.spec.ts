import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import {
  FIXED_PORT_RANGES,
  freePort,
  freePortBlock,
  portRange,
  releasePort,
  reservePort,
} from './processes';

function listenOn(port: number, host: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}

const RESERVATIONS = path.join(os.tmpdir(), 'payments-stack-ports');

/** The ports this process holds a reservation of (reservePort writes the holder's pid). */
function reservedHere(): Set<number> {
  const ports = readdirSync(RESERVATIONS).filter((file) => {
    try {
      return readFileSync(path.join(RESERVATIONS, file), 'utf8') === String(process.pid);
    } catch {
      return false;
    }
  });
  return new Set(ports.map(Number));
}

const close = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

/** `random` for freePortBlock that starts its search at `port` (in the default range). */
const startingAt = (port: number, count = 1) => {
  const { low, high } = portRange();
  return () => (port - low + 0.5) / (high - low - count + 1);
};

describe('freePort / freePortBlock: one allocator for every stack on this machine', () => {
  // Each test's ports are given back after it (only this process's: never another stack's): a
  // reservation left would keep them from the stacks of the machine for 15 minutes.
  let before: Set<number>;
  beforeEach(() => {
    mkdirSync(RESERVATIONS, { recursive: true });
    before = reservedHere();
  });
  afterEach(() => {
    for (const port of reservedHere()) if (!before.has(port)) releasePort(port);
  });

  it('hands out ports below the kernel ephemeral range (no listen(0) or outgoing socket can take them) and outside the fixed ones', async () => {
    const { low, high } = portRange();
    const ports = await Promise.all(Array.from({ length: 30 }, () => freePort()));
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(low);
      expect(port).toBeLessThan(high);
      expect(FIXED_PORT_RANGES.some(([from, to]) => port >= from && port <= to)).toBe(false);
    }
    // The chaos run's replicated PostgreSQL (25481–25483) and brokers (29292, 29392) are kept out.
    for (const fixed of [25_431, 25_481, 25_483, 25_531, 29_092, 29_292, 29_397]) {
      expect(FIXED_PORT_RANGES.some(([from, to]) => fixed >= from && fixed <= to)).toBe(true);
    }
  });

  it('the range is the one below /proc ip_local_port_range, or above it when that starts too low', () => {
    expect(portRange({ low: 32_768, high: 60_999 })).toEqual({ low: 20_000, high: 32_768 });
    expect(portRange({ low: 49_152, high: 65_535 })).toEqual({ low: 20_000, high: 49_152 });
    expect(portRange({ low: 10_000, high: 50_000 })).toEqual({ low: 50_001, high: 65_536 });
  });

  it('two callers never get the same port, even when their searches start at the same one', async () => {
    const probe = await freePort();
    releasePort(probe);
    const random = startingAt(probe);
    const ports = await Promise.all(Array.from({ length: 12 }, () => freePortBlock(1, { random })));
    expect(new Set(ports).size).toBe(12);
    // A port handed out is not handed out again while its reservation is young.
    for (const port of ports) expect(reservePort(port)).toBe(false);
  });

  it('two callers never get overlapping blocks, each block consecutive and wholly reserved', async () => {
    const probe = await freePortBlock(6);
    for (let p = probe; p < probe + 6; p += 1) releasePort(p);
    const random = startingAt(probe, 6);
    const firsts = await Promise.all(Array.from({ length: 4 }, () => freePortBlock(6, { random })));
    const ports = firsts.flatMap((first) => Array.from({ length: 6 }, (_, i) => first + i));
    expect(new Set(ports).size).toBe(24);
    for (const port of ports) expect(reservePort(port)).toBe(false);
  });

  it('a port someone else listens on (here or on another address only) is skipped, and its reservation not kept', async () => {
    const first = await freePortBlock(3);
    for (let p = first; p < first + 3; p += 1) releasePort(p);
    // 127.0.0.2: a connect to 127.0.0.1 says nobody is there; a bind says otherwise.
    const others = [await listenOn(first, '127.0.0.1'), await listenOn(first + 1, '127.0.0.2')];
    try {
      const port = await freePortBlock(1, { random: startingAt(first) });
      expect(port).toBe(first + 2);
      expect(reservePort(first)).toBe(true);
      expect(reservePort(first + 1)).toBe(true);
      const block = await freePortBlock(2, { random: startingAt(first, 2) });
      expect(block).toBeGreaterThan(first + 2);
    } finally {
      await Promise.all(others.map(close));
    }
  });

  it('a stale reservation (older than 15 minutes) gives the port back', async () => {
    const port = await freePort();
    expect(reservePort(port, Date.now() + 16 * 60_000)).toBe(true);
  });
});
