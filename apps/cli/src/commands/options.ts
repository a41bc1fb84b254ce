import { readFileSync } from 'node:fs';
import { Kafka, logLevel } from 'kafkajs';
import { UsageError } from './errors';

/** Options every command takes (commander also reads them from the environment: KAFKA_BROKERS). */
export interface CommonOptions {
  readonly brokers?: string;
}

export function brokersOf(options: CommonOptions): string[] {
  const list = (options.brokers ?? '127.0.0.1:9092')
    .split(',')
    .map((b) => b.trim())
    .filter(Boolean);
  if (list.length === 0) throw new UsageError('no brokers: pass --brokers host:port[,host:port]');
  return list;
}

export function kafkaOf(options: CommonOptions): Kafka {
  return new Kafka({
    clientId: 'payments-cli',
    brokers: brokersOf(options),
    logLevel: logLevel.NOTHING,
  });
}

export function positiveInt(name: string) {
  return (value: string): number => {
    if (!/^[1-9]\d{0,8}$/.test(value))
      throw new UsageError(`${name} must be a whole number >= 1, got "${value}"`);
    return Number(value);
  };
}

export function positiveNumber(name: string) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^\d+(\.\d+)?$/.test(value) || !(n > 0))
      throw new UsageError(`${name} must be a number > 0, got "${value}"`);
    return n;
  };
}

export function isoTime(name: string) {
  return (value: string): Date => {
    const at = new Date(value);
    if (Number.isNaN(at.getTime()))
      throw new UsageError(`${name} must be an ISO 8601 time, got "${value}"`);
    return at;
  };
}

export function regex(name: string) {
  return (value: string): RegExp => {
    try {
      return new RegExp(value);
    } catch (error) {
      throw new UsageError(`${name} is not a regular expression: ${String(error)}`);
    }
  };
}

/** Collects a repeatable option into a list. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** A JSON file's content, or a UsageError naming the file and what is wrong. */
export function readJsonFile(file: string, what: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${what} ${file}: ${(error as Error).message}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new UsageError(`${what} ${file} is not JSON: ${(error as Error).message}`);
  }
}
