#!/usr/bin/env node
/**
 * `payments` — the operator CLI: send a command, tail the outcome events, show and search sagas
 * (through the orchestrator's admin API), list and replay dead letters. Every command prints data
 * on stdout (lines, or JSON with --json) and progress, summaries and errors on stderr. Exit codes:
 * 0 done, 1 failed, 2 bad input (nothing was sent), 3 `reconcile --wait` found mismatches.
 */
import { Command, CommanderError, Option } from 'commander';
import { listSagas, showSaga } from './commands/admin';
import { listDeadLetters, replayDeadLetters } from './commands/dlq';
import { reconcile } from './commands/reconcile';
import { closeDay } from './commands/close';
import { send } from './commands/send';
import { tail } from './commands/tail';
import { createToken, listTokens, revokeToken } from './commands/tokens';
import {
  approveCase,
  listCases,
  proposeCase,
  rejectCaseProposal,
  showCase,
} from './commands/cases';
import { UsageError } from './commands/errors';
import { collect, isoTime, positiveInt, positiveNumber, regex } from './commands/options';

const out = (line: string) => void process.stdout.write(`${line}\n`);
const err = (line: string) => void process.stderr.write(`${line}\n`);

export function program(): Command {
  const cli = new Command('payments')
    .description('Operate the payments service: commands, events, sagas, dead letters.')
    .addOption(
      new Option('--brokers <list>', 'Kafka brokers, comma-separated').env('KAFKA_BROKERS'),
    )
    .showHelpAfterError()
    .exitOverride();

  cli
    .command('send')
    .description('validate, seal and send one command from a JSON file ({"type": "sale", …})')
    .argument('<command-file>', 'the command as JSON; never put a card in it')
    .option(
      '--card <file>',
      'the card as JSON (number, expiryMonth, expiryYear, cvv, holderName), sealed before sending',
    )
    .option(
      '--destination-card <file>',
      'a transfer’s destination card as JSON, sealed before sending',
    )
    .addOption(
      new Option('--sealing-key <pem-file>', 'the gateway-adapter’s card-sealing public key').env(
        'CARD_SEALING_PUBLIC_KEY_FILE',
      ),
    )
    .option('--sealing-key-id <id>', 'which of the adapter’s keys it is')
    .option('--source <uri>', 'ce_source of the command', 'urn:payments:cli')
    .option('--dry-run', 'validate and seal, print, send nothing')
    .action(async (file: string, options: Parameters<typeof send>[1]) => {
      await send(file, { ...cli.opts(), ...options }, out);
    });

  cli
    .command('tail')
    .description('print outcome events as they arrive, decoded and filtered')
    .option('--saga <id>', 'only this payment, payout, transfer or schedule')
    .option('--type <type>', 'only this event type (repeatable)', collect)
    .option('--from-beginning', 'start at the oldest event kept, not at the newest')
    .option('--max <n>', 'stop after n events', positiveInt('--max'))
    .option('--seconds <n>', 'stop after n seconds', positiveNumber('--seconds'))
    .option('--json', 'one JSON object per event (meta + event)')
    .action(async (options: Parameters<typeof tail>[0]) => {
      const stop = new AbortController();
      process.once('SIGINT', () => stop.abort());
      const shown = await tail({ ...cli.opts(), ...options }, out, err, stop.signal);
      err(`${shown} event(s)`);
    });

  const admin = (command: Command) =>
    command
      .addOption(
        new Option('--admin-url <url>', 'the orchestrator’s admin API').env('PAYMENTS_ADMIN_URL'),
      )
      .addOption(new Option('--token <token>', 'an admin bearer token').env('PAYMENTS_ADMIN_TOKEN'))
      .option('--json', 'the API’s JSON as it is');

  admin(cli.command('saga'))
    .description('one saga: state, history, events, gateway requests')
    .argument('<id>', 'payment, payout, transfer or schedule id')
    .action(async (id: string, options: Parameters<typeof showSaga>[1]) =>
      showSaga(id, options, out),
    );

  admin(cli.command('sagas'))
    .description('search sagas')
    .option('--flow <flow>')
    .option('--status <status>')
    .option('--endpoint <id>', 'merchant endpoint')
    .option('--from <time>', 'created at or after (ISO 8601)')
    .option('--to <time>', 'created before (ISO 8601)')
    .option('--currency <code>')
    .option('--unknown-older-than <seconds>', 'outcome unknown for longer than this')
    .option('--limit <n>')
    .option('--cursor <cursor>', 'the next page, as the previous answer gave it')
    .action(
      async (options: Record<string, string | undefined> & Parameters<typeof listSagas>[1]) => {
        const { adminUrl, token, json, unknownOlderThan, ...filters } = options;
        await listSagas(
          { ...filters, unknownOlderThanSeconds: unknownOlderThan },
          { adminUrl, token, json: json },
          out,
        );
      },
    );

  admin(cli.command('close'))
    .description(
      "close a day: each merchant's money events of the day (in its time zone) counted and summed per type and currency, published once as day-closed; the close report ties the day out against the gateway",
    )
    .requiredOption('--day <day>', 'YYYY-MM-DD, the merchants’ calendar day')
    .option('--endpoint <id>', 'one merchant endpoint (default: every merchant with money events)')
    .option('--show', 'only read the stored closes of the day')
    .option('--csv', 'the day-closed control totals as CSV (columns: docs/operations.md)')
    .option('--rerun', 'start the next version of the close report (the day reconciled again)')
    .option('--wait', 'wait until the close reports are written (reconciled against the gateway)')
    .option('--wait-seconds <n>', 'how long --wait waits at most (default 600)')
    .option(
      '--export <folder>',
      'write the close reports as CSV: close-<day>[-<endpoint>]-totals.csv and -lines.csv (columns: docs/integration.md)',
    )
    .action(async (options: Parameters<typeof closeDay>[0]) => closeDay(options, out));

  const tokens = cli
    .command('tokens')
    .description('admin tokens stored by the orchestrator (an approver token of every merchant)');
  admin(tokens.command('create'))
    .description('create a token; it is printed once (stdout), only its SHA-256 is kept')
    .option('--name <person>', 'who the token names (four eyes compares names)')
    .option('--role <role>', 'viewer, operator or approver')
    .option('--endpoint <id>', 'a merchant endpoint the token is limited to (repeatable)', collect)
    .option('--all-merchants', 'the token sees every merchant')
    .action(async (options: Parameters<typeof createToken>[0]) => createToken(options, out, err));
  admin(tokens.command('list'))
    .description('the stored tokens: id, name, role, scope, created and revoked at and by')
    .action(async (options: Parameters<typeof listTokens>[0]) => listTokens(options, out));
  admin(tokens.command('revoke'))
    .description('revoke a stored token: refused by the admin API from now on')
    .argument('<id>', 'the token id (payments tokens list)')
    .action(async (id: string, options: Parameters<typeof revokeToken>[1]) =>
      revokeToken(id, options, out),
    );

  const cases = cli
    .command('cases')
    .description(
      'cases: operations a person decides (no trace, amount mismatch …); a money decision needs two people',
    );
  admin(cases.command('list'))
    .description('the cases in the token’s scope, newest first')
    .option('--status <status>', 'open, proposed, closed or reopened')
    .action(async (options: Parameters<typeof listCases>[0]) => listCases(options, out));
  admin(cases.command('show'))
    .description('one case: its concern, evidence, proposal, decision and audit')
    .argument('<id>', 'the case id (payments cases list)')
    .action(async (id: string, options: Parameters<typeof showCase>[1]) =>
      showCase(id, options, out),
    );
  admin(cases.command('propose'))
    .description('propose a decision with a reason (operator role); a second person approves')
    .argument('<id>', 'the case id')
    .option('--decision <decision>', 'done, not-done or refresh-and-wait')
    .option('--amount <minor>', '"done": the amount the gateway did it at, in minor units')
    .option('--currency <code>', '"done": its ISO 4217 currency')
    .option('--amount-why <text>', '"done" at another amount than requested: why')
    .option('--reason <text>', 'why (the evidence the decision rests on)')
    .action(async (id: string, options: Parameters<typeof proposeCase>[1]) =>
      proposeCase(id, options, out),
    );
  admin(cases.command('approve'))
    .description('approve the pending proposal (approver role, not its proposer): the saga settles')
    .argument('<id>', 'the case id')
    .action(async (id: string, options: Parameters<typeof approveCase>[1]) =>
      approveCase(id, options, out),
    );
  admin(cases.command('reject-proposal'))
    .description('reject the pending proposal (approver role, or its proposer withdrawing it)')
    .argument('<id>', 'the case id')
    .option('--reason <text>', 'why')
    .action(async (id: string, options: Parameters<typeof rejectCaseProposal>[1]) =>
      rejectCaseProposal(id, options, out),
    );

  cli
    .command('reconcile')
    .description('compare the sagas of a time window with the gateway’s status replies')
    .requiredOption('--from <time>', 'sagas created at or after (ISO 8601)', isoTime('--from'))
    .option('--to <time>', 'sagas created before (ISO 8601; default now)', isoTime('--to'))
    .option('--endpoint <id>', 'only this merchant endpoint')
    .option('--requested-by <name>', 'who asks (default cli:<user>)')
    .option('--wait', 'follow the run: print each mismatch, then the counts')
    .option(
      '--timeout <seconds>',
      'with --wait: give up after (default 600)',
      positiveInt('--timeout'),
    )
    .option('--json', 'mismatches as JSON events')
    .action(async (options: Parameters<typeof reconcile>[0]) => {
      const outcome = await reconcile({ ...cli.opts(), ...options }, out, err);
      if ((outcome.completed?.mismatched ?? 0) > 0) process.exitCode = 3;
    });

  const dlq = cli.command('dlq').description('dead letters (<topic>.dlq)');
  const selection = (command: Command) =>
    command
      .option(
        '--topic <dlq-topic>',
        'only this dead-letter topic (repeatable; default every *.dlq)',
        collect,
      )
      .option(
        '--reason <reason>',
        'only this dlq-reason: parse, schema, non-retriable, retries-exhausted (repeatable)',
        collect,
      )
      .option('--original-topic <topic>', 'only records from this topic (repeatable)', collect)
      .option('--key <regex>', 'only records whose key matches', regex('--key'))
      .option(
        '--since <time>',
        'only records dead-lettered at or after (ISO 8601)',
        isoTime('--since'),
      )
      .option('--max <n>', 'at most n records', positiveInt('--max'))
      .option('--json', 'JSON lines');
  selection(dlq.command('list'))
    .description('list dead letters')
    .action(async (options: Parameters<typeof listDeadLetters>[0]) => {
      await listDeadLetters({ ...cli.opts(), ...options }, out, err);
    });
  selection(dlq.command('replay'))
    .description('produce selected dead letters again to their original topics')
    .option('--dry-run', 'list what would be replayed, send nothing')
    .option(
      '--rate <per-second>',
      'at most this many records per second (default 50)',
      positiveNumber('--rate'),
    )
    .option('--progress', 'show a progress bar even when stderr is not a terminal')
    .option('--no-progress', 'never show a progress bar')
    .action(async (options: Parameters<typeof replayDeadLetters>[0]) => {
      const summary = await replayDeadLetters({ ...cli.opts(), ...options }, out, err);
      if (summary.failed > 0) process.exitCode = 1;
    });

  return cli;
}

export async function main(argv: readonly string[]): Promise<number> {
  try {
    await program().parseAsync([...argv], { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    if (error instanceof UsageError) {
      err(`payments: ${error.message}`);
      return 2;
    }
    err(`payments: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}

if (require.main === module) {
  void main(process.argv.slice(2)).then((code) => process.exit(code));
}
