import { describe, expect, it } from 'vitest';
import { escapeHtml, html, trustedHtml } from './html.js';

describe('html', () => {
  it('escapes every interpolated string and number, in text and in attributes', () => {
    const name = `<script>alert("x")</script>&'`;
    expect(html`<p title="${name}">${name}</p>`.text).toBe(
      '<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;</p>',
    );
    expect(html`<b>${42}</b>`.text).toBe('<b>42</b>');
  });

  it('keeps markup made by html or marked trusted, and drops null, undefined and false', () => {
    const inner = html`<i>${'a<b'}</i>`;
    expect(html`<p>${inner}${[html`<br>`, 'x&y']}${trustedHtml('<svg></svg>')}</p>`.text).toBe(
      '<p><i>a&lt;b</i><br>x&amp;y<svg></svg></p>',
    );
    expect(html`<p>${null}${undefined}${false}</p>`.text).toBe('<p></p>');
  });

  it('does not take an object that merely looks like safe markup', () => {
    const forged = { text: '<script>' } as unknown as string;
    expect(html`${forged}`.text).toBe('[object Object]');
    expect(escapeHtml('&amp;')).toBe('&amp;amp;');
  });
});
