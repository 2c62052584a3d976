import { createRequire } from 'node:module';

/**
 * This package's version (its package.json, beside dist/): `loyalty --version`, the User-Agent,
 * install hints. Read with require, not by importing node:fs: an ES import of node:fs loads
 * fs/promises, streams and readline with it, 10 % of `loyalty --help`'s start-up (issue 30).
 */
export const CLI_VERSION = (createRequire(import.meta.url)('../package.json') as { version: string }).version;
