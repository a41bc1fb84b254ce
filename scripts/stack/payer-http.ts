/**
 * The payer's (or payee's) side played by a plain HTTP client, no browser: what the sandbox's
 * pages ask of a browser is a form to read and submit, then an auto-submitting POST back to the
 * merchant (redirect_url on callback-ingest). The chaos run plays many payers at once with it;
 * payer-browser.ts is the real browser for the tests that need one.
 */

/** What a payer does at the ACS challenge page. */
export type ChallengeAnswer = 'hinted-password' | 'wrong-password' | 'cancel' | 'abandon';

export interface PayeeCard {
  readonly number: string;
  readonly holder: string;
  readonly month: string;
  readonly year: string;
}

/** What the payer's client saw: the page statuses, and the merchant's answer to the return. */
export interface PayerVisit {
  readonly pageStatus: number;
  readonly submitStatus?: number;
  /** callback-ingest's answer to the auto-posted return (303 to the merchant's page). */
  readonly returnStatus?: number;
}

interface HtmlForm {
  readonly action: string;
  readonly fields: Record<string, string>;
}

const TIMEOUT_MS = 15_000;

function unescapeHtml(value: string): string {
  return value
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

function attribute(tag: string, name: string): string | undefined {
  const match = new RegExp(`\\s${name}="([^"]*)"`).exec(tag);
  return match ? unescapeHtml(match[1]) : undefined;
}

/** The form `id` of a sandbox page (its action resolved against the page) and its hidden fields. */
export function formOf(html: string, id: string, pageUrl: string): HtmlForm | undefined {
  const open = new RegExp(`<form[^>]*\\sid="${id}"[^>]*>`).exec(html);
  if (!open) return undefined;
  const end = html.indexOf('</form>', open.index);
  const body = html.slice(open.index, end < 0 ? undefined : end);
  const fields: Record<string, string> = {};
  for (const input of body.match(/<input[^>]*>/g) ?? []) {
    const name = attribute(input, 'name');
    if (attribute(input, 'type') === 'hidden' && name !== undefined)
      fields[name] = attribute(input, 'value') ?? '';
  }
  return { action: new URL(attribute(open[0], 'action') ?? '', pageUrl).href, fields };
}

async function get(url: string): Promise<{ status: number; html: string }> {
  const response = await fetch(url, { signal: AbortSignal.timeout(TIMEOUT_MS) });
  return { status: response.status, html: await response.text() };
}

async function post(
  url: string,
  fields: Record<string, string>,
): Promise<{ status: number; html: string }> {
  const response = await fetch(url, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  return { status: response.status, html: await response.text() };
}

/** A browser runs the page's auto-submitting form: the signed return to the merchant. */
async function returnToMerchant(html: string, pageUrl: string): Promise<number | undefined> {
  const back = formOf(html, 'autoPost', pageUrl);
  return back ? (await post(back.action, back.fields)).status : undefined;
}

/**
 * The 3-D Secure payer: opens the ACS page the payment's `action-required` named, then types the
 * password the page hints at, a wrong one, presses Cancel, or leaves (abandon: the page was seen,
 * nothing submitted). A page that is not the challenge throws (the URL or the session is wrong).
 */
export async function answerChallengeOverHttp(
  acsUrl: string,
  answer: ChallengeAnswer,
): Promise<PayerVisit> {
  const page = await get(acsUrl);
  const form = formOf(page.html, 'acsForm', acsUrl);
  if (page.status !== 200 || !form)
    throw new Error(`ACS page ${acsUrl}: HTTP ${page.status}, no challenge form`);
  if (answer === 'abandon') return { pageStatus: page.status };
  const hint = /<p id="acsHint">[^<]*<code>([^<]*)<\/code>/.exec(page.html)?.[1];
  if (hint === undefined) throw new Error(`ACS page ${acsUrl}: no password hint`);
  const fields =
    answer === 'cancel'
      ? { password: '', action: 'cancel' }
      : {
          password: answer === 'hinted-password' ? unescapeHtml(hint) : `${unescapeHtml(hint)}-x`,
          action: 'submit',
        };
  const submitted = await post(form.action, fields);
  if (submitted.status !== 200)
    throw new Error(`ACS submit ${form.action}: HTTP ${submitted.status}`);
  return {
    pageStatus: page.status,
    submitStatus: submitted.status,
    returnStatus: await returnToMerchant(submitted.html, form.action),
  };
}

/**
 * The payer (or payee) on the gateway's hosted form: types the card and sends it. A card form
 * (sale-form, preauth-form, account-verification-form) asks for the CVV too; the payout form has
 * no CVV field.
 */
async function completeHostedFormOverHttp(
  formUrl: string,
  card: PayeeCard & { readonly cvv?: string },
  what: string,
): Promise<PayerVisit> {
  const page = await get(formUrl);
  const form = formOf(page.html, 'hppForm', formUrl);
  if (page.status !== 200 || !form)
    throw new Error(`${what} ${formUrl}: HTTP ${page.status}, no form`);
  const submitted = await post(form.action, {
    ...form.fields,
    credit_card_number: card.number,
    card_printed_name: card.holder,
    expire_month: card.month,
    expire_year: card.year,
    ...(card.cvv === undefined ? {} : { cvv2: card.cvv }),
  });
  if (submitted.status !== 200)
    throw new Error(`${what} submit ${form.action}: HTTP ${submitted.status}`);
  return {
    pageStatus: page.status,
    submitStatus: submitted.status,
    returnStatus: await returnToMerchant(submitted.html, form.action),
  };
}

/** The payee on the gateway's hosted payout form: types the destination card and sends it. */
export function completePayoutFormOverHttp(formUrl: string, card: PayeeCard): Promise<PayerVisit> {
  return completeHostedFormOverHttp(formUrl, card, 'payout form');
}

/** The payer on a hosted card form (sale-form, preauth-form): types the card with its CVV. */
export function completeCardFormOverHttp(
  formUrl: string,
  card: PayeeCard & { readonly cvv: string },
): Promise<PayerVisit> {
  return completeHostedFormOverHttp(formUrl, card, 'card form');
}
