import { CaseProposeBody } from '@payments/contracts';
import { type AdminOptions, adminGet, adminPost } from './admin';
import { UsageError } from './errors';

/** A case as the admin API answers it (GET /admin/cases): what the lines show. */
interface CaseView {
  readonly caseId: string;
  readonly flow: string;
  readonly sagaId: string;
  readonly operation: string;
  readonly concern: string;
  readonly status: string;
  readonly requestedAmount?: { minor: number; currency: string };
  readonly reportedAmount?: { minor: number; currency: string };
  readonly proposal?: { proposal: { decision: string }; by: string; reason: string };
  readonly decided?: { proposal: { decision: string }; by: string; approvedBy: string };
}

export interface ProposeOptions extends AdminOptions {
  readonly decision?: string;
  readonly amount?: string;
  readonly currency?: string;
  readonly amountWhy?: string;
  readonly reason?: string;
}

/** The propose body the options name (checked as the admin API checks it: nothing sent if not). */
export function proposalOf(options: ProposeOptions): CaseProposeBody {
  const amount =
    options.amount === undefined
      ? undefined
      : { minor: Number(options.amount), currency: options.currency ?? '' };
  if (amount !== undefined && !/^\d+$/.test(options.amount ?? ''))
    throw new UsageError('--amount: minor units, an integer (e.g. 1999 for 19.99)');
  const parsed = CaseProposeBody.safeParse({
    decision: options.decision,
    reason: options.reason,
    ...(amount === undefined ? {} : { amount }),
    ...(options.amountWhy === undefined ? {} : { amountWhy: options.amountWhy }),
  });
  if (!parsed.success)
    throw new UsageError(
      `--decision done|not-done|refresh-and-wait with --reason; "done" with --amount <minor> --currency <ISO 4217> (${parsed.error.issues
        .map((i) => `${i.path.join('.') || '$'}: ${i.message}`)
        .join('; ')})`,
    );
  return parsed.data;
}

const money = (m?: { minor: number; currency: string }) =>
  m === undefined ? '-' : `${m.minor} ${m.currency}`;

/** One case as a line: id, status, concern, flow and operation, amounts, proposal or decision. */
export function caseLine(c: CaseView): string {
  const pending =
    c.proposal === undefined
      ? ''
      : `  proposed ${c.proposal.proposal.decision} by ${c.proposal.by}: ${c.proposal.reason}`;
  const decided =
    c.decided === undefined
      ? ''
      : `  decided ${c.decided.proposal.decision} by ${c.decided.by}, approved by ${c.decided.approvedBy}`;
  return `${c.caseId}  ${c.status}  ${c.concern}  ${c.flow} ${c.operation}  saga ${c.sagaId}  requested ${money(c.requestedAmount)}  reported ${money(c.reportedAmount)}${pending}${decided}`;
}

/** `payments cases list [--status s]`. */
export async function listCases(
  options: AdminOptions & { readonly status?: string },
  out: (line: string) => void,
): Promise<void> {
  const query = options.status === undefined ? '' : `?status=${encodeURIComponent(options.status)}`;
  const cases = (await adminGet(`/admin/cases${query}`, options)) as CaseView[];
  if (options.json === true) out(JSON.stringify(cases));
  else for (const c of cases) out(caseLine(c));
}

/** `payments cases show <id>`: the case with its evidence and audit (JSON). */
export async function showCase(
  id: string,
  options: AdminOptions,
  out: (line: string) => void,
): Promise<void> {
  const c = await adminGet(`/admin/cases/${encodeURIComponent(id)}`, options);
  out(JSON.stringify(c, null, options.json === true ? undefined : 2));
}

/** `payments cases propose <id> --decision … --reason …`. */
export async function proposeCase(
  id: string,
  options: ProposeOptions,
  out: (line: string) => void,
): Promise<void> {
  const body = proposalOf(options);
  const c = (await adminPost(
    `/admin/cases/${encodeURIComponent(id)}/propose`,
    body,
    options,
  )) as CaseView;
  out(options.json === true ? JSON.stringify(c) : caseLine(c));
}

/** `payments cases approve <id>`: the second person (approver role); the saga settles. */
export async function approveCase(
  id: string,
  options: AdminOptions,
  out: (line: string) => void,
): Promise<void> {
  const c = (await adminPost(
    `/admin/cases/${encodeURIComponent(id)}/approve`,
    {},
    options,
  )) as CaseView;
  out(options.json === true ? JSON.stringify(c) : caseLine(c));
}

/** `payments cases reject-proposal <id> --reason …`. */
export async function rejectCaseProposal(
  id: string,
  options: AdminOptions & { readonly reason?: string },
  out: (line: string) => void,
): Promise<void> {
  if (options.reason === undefined || options.reason.trim() === '')
    throw new UsageError('--reason <why> is required');
  const c = (await adminPost(
    `/admin/cases/${encodeURIComponent(id)}/reject-proposal`,
    { reason: options.reason },
    options,
  )) as CaseView;
  out(options.json === true ? JSON.stringify(c) : caseLine(c));
}
