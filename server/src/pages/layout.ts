import { html, type SafeHtml } from './html.js';

/**
 * Colours with at least 4.5:1 contrast against their backgrounds (WCAG AA for body text):
 * #1b1f24 on #ffffff 16:1, #4a5260 on #ffffff 7.8:1, #0b57d0 on #ffffff 6.4:1, and each status
 * badge's text on its own tint over 6:1. System fonts only: the pages fetch nothing.
 */
const BASE_STYLE = `
:root{color-scheme:light;--ink:#1b1f24;--muted:#4a5260;--line:#d5d9e0;--accent:#0b57d0;--bg:#f3f5f8}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--ink);font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:28rem;margin:0 auto;padding:1rem}
a{color:var(--accent)}
h1{font-size:1.5rem;line-height:1.25;margin:.25rem 0 0}
.card{background:#fff;border:1px solid var(--line);border-radius:1rem;padding:1.25rem;box-shadow:0 1px 3px rgba(0,0,0,.08)}
.muted{color:var(--muted)}
@media (min-width:48rem){main{padding:2.5rem 1rem}}
`;

/** The document around a page's body: language, viewport, title, inline style. */
export const page = (title: string, body: SafeHtml, style = ''): string =>
  html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex">
<title>${title}</title>
<link rel="icon" href="data:,">
<style>${BASE_STYLE}${style}</style>
</head>
<body>
${body}
</body>
</html>
`.text;
