import { html } from './html.js';
import { page } from './layout.js';

const STYLE = `ul{padding-left:1.25rem}li{margin:.35rem 0}h2{font-size:1.15rem;margin:1.5rem 0 .5rem}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.85rem}
pre{background:var(--bg);border:1px solid var(--line);border-radius:.5rem;padding:.75rem;overflow-x:auto;white-space:pre}
@media (min-width:48rem){main{max-width:46rem}}`;

/** GET /: what this server is and where to go next; the quick start is the README's, with this server's address. */
export function landingPage(version: string, baseUrl: string): string {
  const token = `TOKEN=$(curl -s -X POST ${baseUrl}/oauth/token \\
  -H 'content-type: application/json' \\
  -d '{"grant_type":"client_credentials","client_id":"acme-admin","client_secret":"acme-admin-secret"}' \\
  | node -pe 'JSON.parse(require("fs").readFileSync(0)).access_token')
curl -s ${baseUrl}/tags -H "authorization: Bearer $TOKEN"`;
  return page(
    'Loyalty reference server',
    html`<main><div class="card">
<h1>Loyalty reference server</h1>
<p class="muted">@loyalty/server <span data-field="version">${version}</span></p>
<ul>
<li><a href="/docs">API reference</a>: the OpenAPI document, rendered</li>
<li><a href="/openapi.yaml">openapi.yaml</a>: the document itself</li>
<li><a href="/health">/health</a>: liveness</li>
<li><a href="#quick-start">Quick start</a>: a token and a first call</li>
</ul>
<p>Every pass's <code>wallet_url</code> is a page of this server, <code>/wallet/&lt;pass code&gt;</code>.</p>
<h2 id="quick-start">Quick start</h2>
<p>From the README, with the demo data's API client:</p>
<pre><code>${token}</code></pre>
</div></main>`,
    STYLE,
  );
}
