/**
 * A consumer process for bench/consumer-recovery.bench.ts: libs/kafka's runner in a Nest
 * application context with shutdown hooks (SIGTERM → drain, commit, leave the group), as the apps
 * run it. Prints one JSON line per event on stdout: `joined`, then `handled` with the partition.
 *
 *   RECOVERY_TOPIC=... RECOVERY_GROUP=... KAFKA_BROKERS=... tsx bench/support/recovery-consumer.ts
 */
import { type DynamicModule, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { z } from 'zod';
import {
  defineHandler,
  getConsumerToken,
  type KafkaConsumerRunner,
  KafkaModule,
} from '@payments/kafka';

const print = (line: Record<string, unknown>) =>
  process.stdout.write(`${JSON.stringify({ ...line, at: Date.now() })}\n`);

const quiet = (): void => undefined;

@Module({})
class RecoveryConsumerModule {}

async function main(): Promise<void> {
  const env = (name: string): string => {
    const value = process.env[name];
    if (!value) throw new Error(`${name} is not set`);
    return value;
  };
  const groupId = env('RECOVERY_GROUP');
  const timing = {
    ...(process.env.KAFKA_SESSION_TIMEOUT_MS
      ? { sessionTimeoutMs: Number(process.env.KAFKA_SESSION_TIMEOUT_MS) }
      : {}),
    ...(process.env.KAFKA_HEARTBEAT_INTERVAL_MS
      ? { heartbeatIntervalMs: Number(process.env.KAFKA_HEARTBEAT_INTERVAL_MS) }
      : {}),
  };
  const entry: DynamicModule = {
    module: RecoveryConsumerModule,
    imports: [
      KafkaModule.forRoot({
        clientId: `recovery-${process.pid}`,
        brokers: env('KAFKA_BROKERS').split(','),
        logLevel: 'nothing',
        logger: { debug: quiet, info: quiet, warn: quiet, error: quiet },
        topicPartitions: 4,
        partitionsConsumedConcurrently: 4,
        ...timing,
      }),
      KafkaModule.forConsumer({
        groupId,
        lagIntervalMs: 0,
        handlers: [
          defineHandler(env('RECOVERY_TOPIC'), z.object({ n: z.number() }), async (m) => {
            print({ event: 'handled', partition: m.partition, n: m.value.n });
          }),
        ],
      }),
    ],
  };
  const app = await NestFactory.createApplicationContext(entry, { logger: false });
  app.enableShutdownHooks();
  await app.get<KafkaConsumerRunner>(getConsumerToken(groupId)).whenJoined();
  print({ event: 'joined' });
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
