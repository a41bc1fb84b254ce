/**
 * The operator CLI (`payments`, bin/payments.js → apps/cli) as an operator runs it, as a separate
 * process against the real broker and the four processes: send a sale from JSON files (the card
 * sealed by the CLI), tail its events, refuse a command file that holds a card, list dead letters
 * and replay one (dry run first: nothing sent).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { TOPICS } from '@payments/contracts';
import { PaymentStack, TEST_CARD_NUMBER } from '../../scripts/stack/payment-stack';
import { REPO_ROOT } from '../../scripts/stack/processes';
import { produceRaw, uniqueName, waitFor, withAdmin } from '../support/kafka';
import { type E2eStack, startE2eStack } from '../support/e2e-stack';

const exec = promisify(execFile);
const BIN = path.join(REPO_ROOT, 'bin/payments.js');
const SEALING_KEY = path.join(
  REPO_ROOT,
  'apps/gateway-adapter/test-keys/card-sealing-test-public.pem',
);

let e2e: E2eStack;
let stack: PaymentStack;
let dir: string;

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** What every run printed on stderr (the last test reads it for Node warnings). */
const stderrs: string[] = [];

async function payments(...args: string[]): Promise<Run> {
  const run = await (async (): Promise<Run> => {
    try {
      // No warning flag: a warning kafkajs or anything else causes must show here.
      const { stdout, stderr } = await exec(process.execPath, [BIN, ...args], {
        env: { ...process.env, KAFKA_BROKERS: stack.options.kafkaBrokers.join(',') },
        timeout: 150_000,
      });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const e = error as { code?: number; stdout?: string; stderr?: string };
      return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
    }
  })();
  stderrs.push(run.stderr);
  return run;
}

const jsonLines = (text: string) =>
  text
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

async function commandsWritten(): Promise<number> {
  const offsets = await withAdmin((admin) => admin.fetchTopicOffsets(TOPICS.commands));
  return offsets.reduce((n, p) => n + Number(p.high), 0);
}

function file(name: string, content: unknown): string {
  const at = path.join(dir, name);
  writeFileSync(at, JSON.stringify(content));
  return at;
}

beforeAll(async () => {
  e2e = await startE2eStack('cli');
  stack = e2e.stack;
  dir = mkdtempSync(path.join(tmpdir(), 'payments-cli-'));
});

afterAll(async () => {
  await e2e?.stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

const card = {
  number: TEST_CARD_NUMBER,
  expiryMonth: 12,
  expiryYear: 2030,
  cvv: '123',
  holderName: 'JANE DOE',
};

function saleFile(amountMinor: number): { paymentId: string; file: string } {
  const sale = stack.sale({ amountMinor });
  const { sealedCard: _sealed, commandId: _id, occurredAt: _at, ...fields } = sale;
  return { paymentId: sale.paymentId, file: file(`sale-${sale.paymentId}.json`, fields) };
}

describe('payments send and tail', () => {
  it('sends a sale from JSON with the card sealed from its own file, and tails it to approved', async () => {
    const { paymentId, file: saleJson } = saleFile(4_200);
    const cardJson = file('card.json', card);
    const sent = await payments('send', saleJson, '--card', cardJson, '--sealing-key', SEALING_KEY);
    expect(sent).toMatchObject({ code: 0 });
    const [line] = jsonLines(sent.stdout);
    expect(line).toMatchObject({ sent: true, sagaId: paymentId, topic: TOPICS.commands });
    expect(String((line?.command as Record<string, unknown>).sealedCard)).toMatch(
      /^<sealed, \d+ characters>$/,
    );

    const tailed = await payments(
      'tail',
      '--saga',
      paymentId,
      '--type',
      'approved',
      '--from-beginning',
      '--max',
      '1',
      '--seconds',
      '120',
      '--json',
    );
    expect(tailed).toMatchObject({ code: 0 });
    const events = jsonLines(tailed.stdout);
    expect(events.map((e) => (e.event as { type: string }).type)).toEqual(['approved']);
    expect(events[0]?.event).toMatchObject({
      paymentId,
      amount: { minor: 4_200, currency: 'USD' },
    });
    expect(events[0]?.meta).toMatchObject({
      ceType: expect.stringContaining('approved'),
      topic: TOPICS.events,
    });

    // The human form of the same event.
    const human = await payments(
      'tail',
      '--saga',
      paymentId,
      '--from-beginning',
      '--max',
      '3',
      '--seconds',
      '60',
    );
    expect(human.stdout).toContain(`approved  ${paymentId}`);
    expect(human.stdout).toContain('amount=4200 USD (minor units)');

    const ledger = await stack.controls.ledger(paymentId);
    expect(ledger.entries.filter((e) => e.movement === 'charged')).toHaveLength(1);
    for (const run of [sent, tailed, human]) {
      expect(run.stdout + run.stderr).not.toContain(TEST_CARD_NUMBER);
    }
  }, 300_000);

  it('refuses a command file that holds a card, or a command the contracts refuse, and sends nothing (exit 2)', async () => {
    const before = await commandsWritten();
    const { file: saleJson } = saleFile(100);
    const withCard = file('with-card.json', {
      ...JSON.parse(readFileSync(saleJson, 'utf8')),
      card,
    });
    const refused = await payments('send', withCard, '--sealing-key', SEALING_KEY);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('must not hold "card"');

    const badAmount = file('bad-amount.json', {
      ...JSON.parse(readFileSync(saleJson, 'utf8')),
      amount: { minor: 1.5, currency: 'USD' },
    });
    const invalid = await payments(
      'send',
      badAmount,
      '--card',
      file('card2.json', card),
      '--sealing-key',
      SEALING_KEY,
    );
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toContain('invalid sale command, not sent');

    const badCard = await payments(
      'send',
      saleJson,
      '--card',
      file('bad-card.json', { ...card, number: '4444444444444441' }),
      '--sealing-key',
      SEALING_KEY,
    );
    expect(badCard.code).toBe(2);
    expect(badCard.stderr).toContain('is not a card');
    expect(badCard.stderr).not.toContain('4444444444444441');

    expect(await commandsWritten()).toBe(before);
  }, 120_000);
});

describe('payments dlq', () => {
  it('lists a dead letter, replays it (dry run sends nothing), and the replay is traceable to it', async () => {
    const key = uniqueName('poison');
    await produceRaw(TOPICS.commands, [{ key, value: '{"type": "sale", "amount": ' }]);
    const select = ['--original-topic', TOPICS.commands, '--key', `^${key}$`, '--json'];
    let letters: Record<string, unknown>[] = [];
    await waitFor(
      async () => {
        letters = jsonLines((await payments('dlq', 'list', ...select)).stdout);
        return letters.length === 1;
      },
      'the poison command in payments.commands.v1.dlq',
      90_000,
    );
    expect(letters[0]).toMatchObject({
      dlqTopic: `${TOPICS.commands}.dlq`,
      reason: 'parse',
      key,
      originalTopic: TOPICS.commands,
    });

    const before = await commandsWritten();
    const dry = await payments('dlq', 'replay', ...select.slice(0, -1), '--dry-run');
    expect(dry).toMatchObject({ code: 0 });
    expect(jsonLines(dry.stdout)).toEqual([
      { wouldReplay: letters[0]?.at, to: TOPICS.commands, key, reason: 'parse' },
    ]);
    expect(dry.stderr).toContain('dry run: 1 of');
    expect(await commandsWritten()).toBe(before);

    const replay = await payments(
      'dlq',
      'replay',
      ...select.slice(0, -1),
      '--rate',
      '5',
      '--no-progress',
    );
    expect(replay).toMatchObject({ code: 0 });
    expect(jsonLines(replay.stdout)).toEqual([
      { replayed: letters[0]?.at, to: TOPICS.commands, key },
    ]);
    expect(replay.stderr).toContain('replayed 1 of 1 selected');
    expect(await commandsWritten()).toBe(before + 1);

    // Still poison: dead-lettered again, naming the dead letter it was replayed from.
    await waitFor(
      async () => {
        letters = jsonLines((await payments('dlq', 'list', ...select)).stdout);
        return letters.length === 2;
      },
      'the replayed command dead-lettered again',
      90_000,
    );
    expect(letters[1]).toMatchObject({ reason: 'parse', key, replayedFrom: letters[0]?.at });
  }, 300_000);

  it('refuses bad options with a clear message (exit 2)', async () => {
    const run = await payments('dlq', 'replay', '--rate', 'fast');
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--rate must be a number > 0, got "fast"');
    const missing = await payments('dlq', 'list', '--topic', 'no-such-topic.dlq');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('no such topic: no-such-topic.dlq');
  }, 60_000);
});

describe('the CLI as a Node process', () => {
  it('printed no Node warning on any run (kafkajs on Node 24 once scheduled a negative timer)', () => {
    expect(stderrs.length).toBeGreaterThan(5);
    expect(stderrs.filter((text) => /Warning:/.test(text))).toEqual([]);
  });
});
