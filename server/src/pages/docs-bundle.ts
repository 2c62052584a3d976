import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/**
 * Redoc's standalone bundle, which /docs loads from this server. Inside this repository it is the
 * installed `redoc` package's file (a dev dependency of the server); an installed @loyalty/server
 * reads the copy that `npm pack` put into it (scripts/server-assets.mjs), so the package does not
 * carry Redoc's React and styled-components peers, only the 1.1 MB bundle.
 */
const PACKED_COPY = fileURLToPath(new URL('../../assets/redoc.standalone.js', import.meta.url));

function bundleFile(): string {
  try {
    return createRequire(import.meta.url).resolve('redoc/bundles/redoc.standalone.js');
  } catch {
    if (existsSync(PACKED_COPY)) return PACKED_COPY;
    throw new Error(
      "Redoc's bundle is missing: neither the redoc package nor the packed copy assets/redoc.standalone.js was found.",
    );
  }
}

/**
 * The bundle's one address elsewhere: its sidebar footer's logo, an <img> from Redocly's CDN that
 * would make every /docs visit a request to a third party. A data URL fails to decode, and Redoc
 * then hides the image (its own onError); the link text "API docs by Redocly" stays.
 */
const FOOTER_LOGO = 'https://cdn.redoc.ly/redoc/logo-mini.svg';

export type DocsBundle = { name: string; body: Buffer; etag: string };

let cached: DocsBundle | undefined;

/** Read once: the bundle, and a name carrying its hash, so it can be cached for a year. */
export function docsBundle(): DocsBundle {
  if (cached) return cached;
  const text = readFileSync(bundleFile(), 'utf8').replaceAll(FOOTER_LOGO, 'data:,');
  const body = Buffer.from(text);
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 12);
  cached = { name: `redoc.standalone.${hash}.js`, body, etag: hash };
  return cached;
}
