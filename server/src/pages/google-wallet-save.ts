import type { SaveToWalletClaims } from '../services/wallet/google-save-link.js';
import type { LoyaltyObject, OfferObject } from '../services/wallet/google-wallet-objects.js';
import { html, type SafeHtml } from './html.js';
import { page } from './layout.js';
import { namedQr, thumbnail } from './wallet.js';

const STYLE = `
.source{font-size:.85rem;color:var(--muted);margin:0 0 .75rem;text-align:center}
.gcard{border-radius:1.25rem;overflow:hidden;background:#fff;border:1px solid var(--line);box-shadow:0 2px 8px rgba(0,0,0,.12)}
.gtop{background:#1f3a5f;color:#fff;padding:1rem 1.25rem 1.25rem}
.brand{display:flex;align-items:center;gap:.75rem}
.brand p{margin:0;font-weight:600;overflow-wrap:anywhere}
.thumb{width:2.75rem;height:2.75rem;border-radius:50%;flex:none}
.gtop h1{margin:.9rem 0 0;font-size:1.4rem;overflow-wrap:anywhere}
.kind{font-size:.85rem;opacity:.9}
.gbody{padding:1rem 1.25rem 1.25rem}
.gbody>p:first-child{margin-top:0}
.state{display:inline-block;padding:0 .6rem;border-radius:999px;font-weight:700;font-size:.9rem}
.state-ACTIVE{background:#e3f4e8;color:#0a5c27}.state-INACTIVE{background:#e8eaf6;color:#283593}.state-EXPIRED{background:#fde8e7;color:#8c1d18}
.qr{display:block;width:100%;max-width:14rem;height:auto;margin:1rem auto .25rem;background:#fff}
.alt{text-align:center;font:600 1.05rem/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;letter-spacing:.06em;margin:0 0 1rem;word-break:break-all}
.noqr{margin:1rem 0;padding:.75rem 1rem;border-radius:.75rem;background:var(--bg);font-weight:500}
dl{display:grid;grid-template-columns:auto 1fr;gap:.35rem 1rem;margin:0}
dt{color:var(--muted)}dd{margin:0;font-weight:600}
.note{font-size:.9rem;color:var(--muted);margin:1rem 0 0}
details{margin-top:1rem;font-size:.85rem}summary{cursor:pointer;color:var(--accent);font-weight:600}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:var(--bg);padding:.75rem;border-radius:.5rem;font-size:.75rem;line-height:1.4}
.error h1{color:#8c1d18}
`;

const STATE_TEXT: Record<string, string> = {
  ACTIVE: 'Active',
  INACTIVE: 'Inactive (redeemed)',
  EXPIRED: 'Expired',
};

type Card = { brand: string; title: string; kind: string; object: OfferObject | LoyaltyObject };

/** What the claims hold, in the sandbox's own JWTs' shape (verifySandboxSaveJwt checked the object is there). */
function cardOf(claims: SaveToWalletClaims): Card {
  const p = claims.payload;
  if ('offerObjects' in p) {
    const offer = p.offerClasses?.[0];
    return { brand: offer?.issuerName ?? '', title: offer?.title ?? '', kind: 'Offer', object: p.offerObjects[0] };
  }
  const loyalty = p.loyaltyClasses?.[0];
  return {
    brand: loyalty?.issuerName ?? '',
    title: loyalty?.programName ?? '',
    kind: 'Loyalty card',
    object: p.loyaltyObjects[0],
  };
}

const until = (object: OfferObject) => object.validTimeInterval?.end?.date?.slice(0, 10);

/**
 * The sandbox's stand-in for Google's save page: the card a save link's JWT carries, from its
 * decoded claims. The barcode is drawn only for an ACTIVE object (as the wallet page shows no
 * code for a redeemed or expired pass); `qrSvg` is undefined otherwise.
 */
export function googleWalletSavePage(
  claims: SaveToWalletClaims,
  header: Record<string, unknown>,
  qrSvg: string | undefined,
): string {
  const { brand, title, kind, object } = cardOf(claims);
  const state = String(object.state);
  const points = 'loyaltyPoints' in object ? object : undefined;
  const end = until(object);
  const why =
    state === 'EXPIRED'
      ? 'This pass has expired: there is no code to scan.'
      : 'This pass is no longer active (redeemed): there is no code to scan.';
  const body = html`<main>
<p class="source">Google Wallet · sandbox preview</p>
<article class="gcard" aria-labelledby="card-title">
<div class="gtop">
<div class="brand">${thumbnail(brand)}<div><p>${brand}</p><span class="kind">${kind}</span></div></div>
<h1 id="card-title">${title}</h1>
</div>
<div class="gbody">
<p><span class="state state-${state}" data-field="state" data-state="${state}">${STATE_TEXT[state] ?? state}</span></p>
${qrSvg ? html`${namedQr(qrSvg, object.barcode.alternateText)}<p class="alt">${object.barcode.alternateText}</p>` : html`<p class="noqr" data-field="no-code">${why}</p>`}
<dl>
${points && html`<dt>${points.loyaltyPoints.label}</dt><dd data-field="balance">${points.loyaltyPoints.balance.int}</dd><dt>${points.secondaryLoyaltyPoints.label}</dt><dd data-field="points">${points.secondaryLoyaltyPoints.balance.int}</dd>`}
<dt>Valid until</dt><dd data-field="valid-until">${end ? html`<time datetime="${end}">${end}</time>` : 'no end date'}</dd>
<dt>Object id</dt><dd data-field="object-id"><code>${object.id}</code></dd>
</dl>
<p class="note">The link's JWT verified with this sandbox's key. Nothing was saved: with a Google Wallet issuer configured (<code>LOYALTY_GOOGLE_WALLET_ISSUER_ID</code>), the same link opens pay.google.com and saves the pass to the member's Google account.</p>
<p class="note"><a href="/wallet/${encodeURIComponent(object.barcode.alternateText)}">Back to the pass</a></p>
<details><summary>Decoded JWT</summary><pre data-field="header">${JSON.stringify(header, null, 2)}</pre><pre data-field="claims">${JSON.stringify(claims, null, 2)}</pre></details>
</div>
</article>
</main>`;
  return page(`${title} · Google Wallet (sandbox)`, body, STYLE);
}

/** The 400 page: the link does not verify, and why. */
export function googleWalletSaveErrorPage(problem: string): string {
  const body: SafeHtml = html`<main><div class="card error"><h1>This link does not verify</h1>
<p data-field="problem">${problem}</p>
<p class="note">This is the sandbox's stand-in for Google Wallet's save page. It opens only links this server signed with its sandbox key (<code>GET /sandbox/google-wallet/jwks.json</code>), unchanged.</p></div></main>`;
  return page('This link does not verify', body, STYLE);
}
