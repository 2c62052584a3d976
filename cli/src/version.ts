import { readFileSync } from 'node:fs';

/** This package's version (its package.json, beside dist/): `loyalty --version`, the User-Agent, install hints. */
export const CLI_VERSION = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
