/**
 * `application/x-www-form-urlencoded` bodies, parsed by hand so that a malformed body is a clear
 * refusal (URLSearchParams silently keeps broken escapes). `+` means a space, as in HTML forms.
 */
export interface FormBody {
  /** Every pair in wire order, duplicates kept (OAuth signs each of them). */
  readonly pairs: ReadonlyArray<readonly [string, string]>;
  /** First value of each name, after trimming surrounding whitespace (the gateway omits it). */
  readonly fields: ReadonlyMap<string, string>;
}

export type FormParse =
  { readonly ok: true; readonly body: FormBody } | { readonly ok: false; readonly reason: string };

function decodeComponent(raw: string): string | undefined {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

export function parseForm(text: string): FormParse {
  const pairs: Array<readonly [string, string]> = [];
  const fields = new Map<string, string>();
  if (text.length > 0) {
    for (const part of text.split('&')) {
      if (part === '') continue;
      const eq = part.indexOf('=');
      const rawName = eq === -1 ? part : part.slice(0, eq);
      const rawValue = eq === -1 ? '' : part.slice(eq + 1);
      const name = decodeComponent(rawName);
      const value = decodeComponent(rawValue);
      if (name === undefined || value === undefined) {
        return { ok: false, reason: 'malformed percent-encoding in the form body' };
      }
      if (name === '') return { ok: false, reason: 'a form field without a name' };
      pairs.push([name, value]);
      if (!fields.has(name)) fields.set(name, value.trim());
    }
  }
  return { ok: true, body: { pairs, fields } };
}

/** Encodes a reply or a redirect form the way the gateway's form replies are written. */
export function encodeForm(values: Record<string, string>): string {
  return Object.entries(values)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
    .join('&');
}
