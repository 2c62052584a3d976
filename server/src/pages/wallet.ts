import type { WalletButtons } from '../services/wallet/wallet-links.js';
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
a.wallet-button{display:flex;align-items:center;justify-content:center;font-weight:600;padding:.8rem 1rem;border-radius:.75rem;background:#1b1f24;color:#fff;min-height:48px;text-decoration:none}
a.wallet-button:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
.dead{margin:1.25rem 0;padding:.9rem 1rem;border-radius:.75rem;background:var(--bg);font-weight:500}
.dead time,.note time{white-space:nowrap}
.note{font-size:.9rem;color:var(--muted);margin:.75rem 0 0}
details{margin-top:.5rem;font-size:.9rem;color:var(--muted)}summary{cursor:pointer;color:var(--accent)}
details ul{padding-left:1.1rem;margin:.5rem 0 0}details li{margin:.35rem 0}
`;

const STATUS_TEXT: Record<WalletPass['status'], string> = {
  active: 'active',
  redeemed: 'redeemed',
  expired: 'expired',
};

/** A thumbnail drawn here from the brand's initial: the data's thumbnail_url is elsewhere, and the page fetches nothing. */
export function thumbnail(brand: string): SafeHtml {
  let hash = 0;
  for (const ch of brand) hash = (hash * 31 + (ch.codePointAt(0) ?? 0)) >>> 0;
  // Dark hues only, so the white initial keeps its contrast.
  const hue = hash % 360;
  const initial = [...brand.trim()][0]?.toUpperCase() ?? '?';
  return html`<svg class="thumb" viewBox="0 0 56 56" aria-hidden="true" focusable="false"><rect width="56" height="56" rx="12" fill="hsl(${hue} 55% 30%)"/><text x="28" y="37" text-anchor="middle" font-size="26" font-family="system-ui,sans-serif" font-weight="700" fill="#fff">${initial}</text></svg>`;
}

/** The QR code's SVG (from the qrcode library) named for assistive technology. */
export function namedQr(svg: string, code: string): SafeHtml {
  const label = html`QR code of pass ${code}`.text;
  return trustedHtml(
    svg
      .replace('<svg ', `<svg class="qr" role="img" aria-labelledby="qr-title" `)
      .replace(/(<svg[^>]*>)/, `$1<title id="qr-title">${label}</title>`),
  );
}

const groups = (code: string) => code.match(/.{1,4}/g)?.join(' ') ?? code;

const KIND_TEXT = { coupon: 'coupon', storecard: 'storecard' } as const;

/** Why a pass has no code to scan and nothing to add to a wallet (decision: a dead pass is not offered to a wallet). */
function deadPassNote(pass: WalletPass): SafeHtml {
  const kind = KIND_TEXT[pass.kind];
  const why =
    pass.status === 'redeemed'
      ? html`This ${kind} was redeemed${pass.redeemed_at ? html` on <time datetime="${pass.redeemed_at}">${pass.redeemed_at.slice(0, 10)}</time>` : ''}`
      : html`This ${kind} expired${pass.expiration_date ? html` after <time datetime="${pass.expiration_date}">${pass.expiration_date}</time>` : ''}`;
  return html`<p class="dead" data-field="no-code">${why}: it has no code to scan any more, and nothing to add to a wallet. A copy already in Apple Wallet shows it as void.</p>`;
}

function walletActions(pass: WalletPass, { links, sandboxes, sandboxMode }: WalletButtons): SafeHtml {
  const expires = pass.expiration_date
    ? html`, valid through <time datetime="${pass.expiration_date}">${pass.expiration_date}</time>`
    : '';
  const ca = sandboxMode ? html` (<a href="/sandbox/wallet/ca.pem">ca.pem</a>)` : '';
  const sandboxNotes = [
    sandboxes.apple &&
      html`<li>Apple Wallet: the pass is signed by this server's test certificate authority${ca}, which no iPhone trusts, so iOS will not install it; <code>loyalty wallet inspect</code> checks it.</li>`,
    sandboxes.google &&
      links.google_save_url &&
      html`<li>Google Wallet: the link opens this sandbox's preview of the card, signed with its own key, instead of Google Wallet.</li>`,
  ].filter(Boolean);
  return html`<div class="actions">
<a class="wallet-button" href="${links.pkpass_url}" data-action="apple-wallet" aria-describedby="wallet-note">Add to Apple Wallet</a>
${links.google_save_url && html`<a class="wallet-button" href="${links.google_save_url}" data-action="google-wallet" aria-describedby="wallet-note">Save to Google Wallet</a>`}
</div>
<p class="note" id="wallet-note">Adds this ${KIND_TEXT[pass.kind]} as it is now: <span data-field="button-state">${STATUS_TEXT[pass.status]}</span>${expires}.</p>
${sandboxNotes.length > 0 && html`<details><summary>Sandbox passes</summary><ul>${sandboxNotes}</ul></details>`}`;
}

/**
 * The page behind wallet_url. An active pass shows its QR code and the wallet buttons; a redeemed
 * or expired one shows neither (decision): no code that a till would refuse, and no button that
 * adds a dead pass to a wallet. `qrSvg` is not shown then.
 */
export function walletPage(pass: WalletPass, qrSvg: string, buttons: WalletButtons): string {
  const kind = pass.kind === 'coupon' ? 'Coupon' : 'Storecard';
  const active = pass.status === 'active';
  const body = html`<main>
<article class="card" aria-labelledby="pass-title">
<div class="brand">${thumbnail(pass.brand_name)}<div><p>${pass.brand_name}</p><span class="muted">${kind}</span></div></div>
<h1 id="pass-title">${pass.title}</h1>
${active ? html`${namedQr(qrSvg, pass.qr_code)}<p class="code"><span class="visually-hidden">Pass code </span>${groups(pass.pass_code)}</p>` : deadPassNote(pass)}
<dl>
<dt>Status</dt><dd><span class="status status-${pass.status}" data-status="${pass.status}">${STATUS_TEXT[pass.status]}</span></dd>
<dt>Expires</dt><dd>${pass.expiration_date ? html`<time datetime="${pass.expiration_date}">${pass.expiration_date}</time>` : 'never'}</dd>
${pass.redeemed_at && html`<dt>Redeemed</dt><dd><time datetime="${pass.redeemed_at}">${pass.redeemed_at.slice(0, 10)}</time></dd>`}
${pass.kind === 'storecard' && html`<dt>Points</dt><dd data-field="points">${pass.points}</dd><dt>Balance</dt><dd data-field="balance">${pass.balance}</dd>`}
${!active && html`<dt>Pass code</dt><dd class="muted" data-field="pass-code">${groups(pass.pass_code)}</dd>`}
</dl>
${active && walletActions(pass, buttons)}
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
