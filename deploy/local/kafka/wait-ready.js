#!/usr/bin/env node
/**
 * Waits until a freshly started broker really serves consumer groups: the port accepting
 * connections is not enough, because the first FindCoordinator creates __consumer_offsets and
 * the broker answers COORDINATOR_NOT_AVAILABLE until it is loaded (kafka-broker.md section 5,
 * kafkajs#1752). Loops kafkajs `admin.describeGroups` until it succeeds.
 *
 * usage: node wait-ready.js <host:port> <broker pid> <timeout seconds>
 * exit 0 ready, 1 timed out, 2 the broker process exited.
 */
'use strict';
const { Kafka, logLevel } = require('kafkajs');

const [broker, pidArg, timeoutArg] = process.argv.slice(2);
const pid = Number(pidArg);
const deadline = Date.now() + Number(timeoutArg || 90) * 1000;

const alive = () => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function main() {
  const kafka = new Kafka({
    clientId: 'kafka-sh-wait-ready',
    brokers: [broker],
    logLevel: logLevel.NOTHING,
    connectionTimeout: 1000,
    requestTimeout: 5000,
    // A few quick retries: the first FindCoordinator on a fresh client fails with "no brokers in
    // the broker pool" until metadata is loaded, and kafkajs refreshes metadata then retries.
    retry: { retries: 3, initialRetryTime: 100, maxRetryTime: 1000 },
  });
  const admin = kafka.admin();
  let lastError = 'not tried';
  try {
    while (Date.now() < deadline) {
      if (!alive()) return 2;
      try {
        await admin.connect();
        await admin.describeGroups(['kafka-sh-warmup']);
        return 0;
      } catch (error) {
        lastError = error && error.message ? error.message : String(error);
      }
      await sleep(250);
    }
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
  process.stderr.write(`group coordinator did not answer in time: ${lastError}\n`);
  return 1;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    process.stderr.write(`${error && error.stack ? error.stack : error}\n`);
    process.exit(1);
  },
);
