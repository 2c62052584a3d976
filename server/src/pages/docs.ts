import { html } from './html.js';

/**
 * GET /docs: Redoc's standalone bundle (served by this server) renders /openapi.yaml. The bundle
 * starts itself on the <redoc spec-url> element, so the page has no inline script.
 *
 * Why Redoc rather than Scalar: both render OpenAPI 3.1 `webhooks`; Redoc renders each webhook as
 * a section of its own (a "Webhook" badge, its headers, its payload schema and sample) and the
 * whole document into the page at once, so every operation can be found without clicking. Its
 * standalone bundle is one self-contained 1.1 MB file that fetches nothing by itself (its one
 * outside address, a footer logo, is replaced in docs-bundle.ts). Scalar's is 4.3 MB, loads its
 * fonts from its CDN unless told not to, has telemetry on by default, and carries its vendor's
 * request proxy and AI agent.
 */
export function docsPage(bundlePath: string): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Loyalty Pass Service API reference</title>
<link rel="icon" href="data:,">
<style>body{margin:0}</style>
</head>
<body>
<redoc spec-url="/openapi.yaml" hide-download-button="false" path-in-middle-panel="true" sort-props-alphabetically="false"></redoc>
<script src="${bundlePath}"></script>
</body>
</html>
`.text;
}
