import { html } from './html.js';

/**
 * GET /docs: Redoc's standalone bundle (served by this server) renders /openapi.yaml. The bundle
 * starts itself on the <redoc spec-url> element, so the page has no inline script.
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
