/**
 * HTML built from tagged templates: every interpolated value is escaped unless it is already
 * `Html` (made by `html` itself), so no text from the API or the request becomes markup.
 */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

export function escapeHtml(value: string): string {
  return value
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

export type HtmlValue = Html | string | number | boolean | null | undefined | readonly HtmlValue[];

function render(value: HtmlValue): string {
  if (value instanceof Html) return value.text;
  if (value === null || value === undefined || value === false) return '';
  if (Array.isArray(value)) return value.map((v: HtmlValue) => render(v)).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): Html {
  let text = strings[0] ?? '';
  values.forEach((value, i) => {
    text += render(value) + (strings[i + 1] ?? '');
  });
  return new Html(text);
}

/** A table's head: one `<th>` a column, in order (an empty string: an empty header cell). */
export function tableHead(...columns: readonly string[]): Html {
  return html`<thead>
    <tr>
      ${columns.map((c) => html`<th>${c}</th>`)}
    </tr>
  </thead>`;
}
