import type { WalletPass } from '../services/wallet/wallet-pass.js';
import { html, trustedHtml, type SafeHtml } from './html.js';
import { page } from './layout.js';

const STYLE = `
.brand{display:flex;align-items:center;gap:.75rem}
.brand p{margin:0;font-weight:600}
.thumb{width:3.5rem;height:3.5rem;border-radius:.75rem;flex:none}
.qr{display:block;width:100%;max-width:16rem;height:auto;margin:1.25rem auto .5rem;background:#fff}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%);white-space:nowrap}
.code{text-align:center;font:600 1.25rem/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;letter-spacing:.08em;margin:0 0 1rem;word-break:break-all}
dl{display:grid;grid-template-columns:auto 1fr;gap:.35rem 1rem;margin:0 0 1.25rem}
dt{color:var(--muted)}dd{margin:0;font-weight:600}
.status{display:inline-block;padding:0 .6rem;border-radius:999px;font-weight:700}
.status-active{background:#e3f4e8;color:#0a5c27}.status-redeemed{background:#e8eaf6;color:#283593}.status-expired{background:#fde8e7;color:#8c1d18}
.actions{display:grid;gap:.75rem}
button{font:inherit;font-weight:600;padding:.8rem 1rem;border-radius:.75rem;border:0;background:#1b1f24;color:#fff;min-height:48px;cursor:not-allowed}
button:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
.note{font-size:.9rem;color:var(--muted);margin:.75rem 0 0}
details{margin-top:.5rem;font-size:.9rem;color:var(--muted)}summary{cursor:pointer;color:var(--accent)}
`;

const STATUS_TEXT: Record<WalletPass['status'], string> = {
  active: 'active',
  redeemed: 'redeemed',
  expired: 'expired',
};

/** A thumbnail drawn here from the brand's initial: the data's thumbnail_url is elsewhere, and the page fetches nothing. */
function thumbnail(brand: string): SafeHtml {
  let hash = 0;
  for (const ch of brand) hash = (hash * 31 + (ch.codePointAt(0) ?? 0)) >>> 0;
  // Dark hues only, so the white initial keeps its contrast.
  const hue = hash % 360;
  const initial = [...brand.trim()][0]?.toUpperCase() ?? '?';
  return html`<svg class="thumb" viewBox="0 0 56 56" aria-hidden="true" focusable="false"><rect width="56" height="56" rx="12" fill="hsl(${hue} 55% 30%)"/><text x="28" y="37" text-anchor="middle" font-size="26" font-family="system-ui,sans-serif" font-weight="700" fill="#fff">${initial}</text></svg>`;
}

/** The QR code's SVG (from the qrcode library) named for assistive technology. */
function namedQr(svg: string, code: string): SafeHtml {
  const label = html`QR code of pass ${code}`.text;
  return trustedHtml(
    svg
      .replace('<svg ', `<svg class="qr" role="img" aria-labelledby="qr-title" `)
      .replace(/(<svg[^>]*>)/, `$1<title id="qr-title">${label}</title>`),
  );
}

const groups = (code: string) => code.match(/.{1,4}/g)?.join(' ') ?? code;

export function walletPage(pass: WalletPass, qrSvg: string): string {
  const kind = pass.kind === 'coupon' ? 'Coupon' : 'Storecard';
  const body = html`<main>
<article class="card" aria-labelledby="pass-title">
<div class="brand">${thumbnail(pass.brand_name)}<div><p>${pass.brand_name}</p><span class="muted">${kind}</span></div></div>
<h1 id="pass-title">${pass.title}</h1>
${namedQr(qrSvg, pass.qr_code)}
<p class="code"><span class="visually-hidden">Pass code </span>${groups(pass.pass_code)}</p>
<dl>
<dt>Status</dt><dd><span class="status status-${pass.status}" data-status="${pass.status}">${STATUS_TEXT[pass.status]}</span></dd>
<dt>Expires</dt><dd>${pass.expiration_date ? html`<time datetime="${pass.expiration_date}">${pass.expiration_date}</time>` : 'never'}</dd>
${pass.redeemed_at && html`<dt>Redeemed</dt><dd><time datetime="${pass.redeemed_at}">${pass.redeemed_at.slice(0, 10)}</time></dd>`}
${pass.kind === 'storecard' && html`<dt>Points</dt><dd data-field="points">${pass.points}</dd><dt>Balance</dt><dd data-field="balance">${pass.balance}</dd>`}
</dl>
<div class="actions">
<button type="button" aria-disabled="true" aria-describedby="sandbox-note">Add to Apple Wallet</button>
<button type="button" aria-disabled="true" aria-describedby="sandbox-note">Add to Google Wallet</button>
</div>
<p class="note" id="sandbox-note">This reference server is a sandbox: it does not sign real passes, so these buttons add nothing to a wallet.</p>
<details><summary>Why not?</summary><p>Apple Wallet takes only a .pkpass signed with the issuer's Pass Type ID certificate, and Google Wallet only a save link signed with the issuer's service account. The production service signs both; show the code above at the till instead.</p></details>
</article>
</main>`;
  return page(`${pass.title} · ${pass.brand_name}`, body, STYLE);
}

export function walletNotFoundPage(): string {
  return page(
    'Pass not found',
    html`<main><div class="card"><h1>Pass not found</h1><p>No pass has this code. Check the link you were sent, or ask the shop for a new one.</p></div></main>`,
  );
}
