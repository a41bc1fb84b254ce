import { html, tableHead } from './html';

describe('html', () => {
  it('escapes every interpolated text, nested lists included, and keeps html fragments', () => {
    const evil = `"><script>alert('x')</script>&`;
    const inner = html`<b>${evil}</b>`;
    const page = html`<p title="${evil}">${[evil, inner]}${null}${undefined}${false}${0}</p>`;
    expect(page.text).toBe(
      '<p title="&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;">' +
        '&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;' +
        '<b>&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;</b>0</p>',
    );
    expect(page.text).not.toContain('<script>');
  });

  it('heads a table with one escaped header cell a column, in order, empty ones kept', () => {
    const head = tableHead('When', '<b>Who</b>', '').text.replace(/\s+/g, '');
    expect(head).toBe(
      '<thead><tr><th>When</th><th>&lt;b&gt;Who&lt;/b&gt;</th><th></th></tr></thead>',
    );
  });
});
