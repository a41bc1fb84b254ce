/** The HTML the sandbox serves to payers: ACS challenge, hosted payment pages, return forms. */
export function escapeHtml(value: string): string {
  return value
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

function page(title: string, body: string, autoSubmit = false): string {
  return `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>
<body${autoSubmit ? ' onload="document.forms[0].submit()"' : ''}>
${body}
</body>
</html>
`;
}

function hidden(fields: Readonly<Record<string, string>>): string {
  return Object.entries(fields)
    .map(([k, v]) => `  <input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v)}">`)
    .join('\n');
}

/** An auto-submitting POST form: how the payer is returned to redirect_url or sent to the ACS. */
export function autoPostPage(
  title: string,
  action: string,
  fields: Readonly<Record<string, string>>,
): string {
  return page(
    title,
    `<form id="autoPost" method="post" action="${escapeHtml(action)}">
${hidden(fields)}
  <noscript><button type="submit">Continue</button></noscript>
</form>`,
    true,
  );
}

/** Only the form, for the `html` field of a status reply. */
export function autoPostFragment(action: string, fields: Readonly<Record<string, string>>): string {
  return `<form id="tdsForm" method="post" action="${escapeHtml(action)}">
${hidden(fields)}
</form><script>document.getElementById('tdsForm').submit();</script>`;
}

export function acsChallengePage(opts: {
  action: string;
  merchantOrder: string;
  amount: string;
  currency: string;
  lastFour: string;
  hint: string;
  error?: string;
}): string {
  return page(
    '3-D Secure challenge',
    `<h1>Sandbox issuer: 3-D Secure</h1>
<p id="acsOrder">Order ${escapeHtml(opts.merchantOrder)}: ${escapeHtml(opts.amount)} ${escapeHtml(opts.currency)}, card ending ${escapeHtml(opts.lastFour)}</p>
${opts.error ? `<p id="acsError">${escapeHtml(opts.error)}</p>\n` : ''}<form id="acsForm" method="post" action="${escapeHtml(opts.action)}">
  <label>Password <input type="password" name="password" autocomplete="off"></label>
  <p id="acsHint">Hint: the password is <code>${escapeHtml(opts.hint)}</code></p>
  <button type="submit" name="action" value="submit">Submit</button>
  <button type="submit" name="action" value="cancel">Cancel</button>
</form>`,
  );
}

export function hostedCardPage(opts: {
  action: string;
  title: string;
  merchantOrder: string;
  amount: string;
  currency: string;
  destination: boolean;
  error?: string;
}): string {
  const cvv = opts.destination
    ? ''
    : '  <label>CVV2 <input name="cvv2" inputmode="numeric" autocomplete="off"></label>\n';
  return page(
    opts.title,
    `<h1>${escapeHtml(opts.title)}</h1>
<p id="hppOrder">Order ${escapeHtml(opts.merchantOrder)}: ${escapeHtml(opts.amount)} ${escapeHtml(opts.currency)}</p>
${opts.error ? `<p id="hppError">${escapeHtml(opts.error)}</p>\n` : ''}<form id="hppForm" method="post" action="${escapeHtml(opts.action)}">
  <label>${opts.destination ? 'Destination card number' : 'Card number'} <input name="credit_card_number" inputmode="numeric" autocomplete="off"></label>
  <label>Name on card <input name="card_printed_name"></label>
  <label>Expiry month <input name="expire_month" inputmode="numeric"></label>
  <label>Expiry year <input name="expire_year" inputmode="numeric"></label>
${cvv}  <button type="submit">${opts.destination ? 'Send payout' : 'Pay'}</button>
</form>`,
  );
}

export function messagePage(title: string, message: string): string {
  return page(title, `<h1>${escapeHtml(title)}</h1>\n<p>${escapeHtml(message)}</p>`);
}
