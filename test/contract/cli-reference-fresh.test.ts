// docs/cli-reference.md is what `npm run gen` makes from the built command tree, and the check that
// says so can fail: the page with one line changed is reported stale.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const page = path.join(root, 'docs/cli-reference.md');

it('docs/cli-reference.md is fresh (run `npm run gen` after changing a command)', async () => {
  const { cliReference } = await import(path.join(root, 'scripts/gen-cli-reference.mjs'));
  const fresh: string = await cliReference();
  expect(await readFile(page, 'utf8'), 'docs/cli-reference.md is stale: run `npm run gen`').toBe(fresh);
  // The page holds every top-level command's help, so a changed flag shows up as a changed page.
  for (const command of ['server', 'login', 'members import', 'webhooks listen', 'api']) {
    expect(fresh).toContain(`\n## loyalty ${command}\n`);
  }
  expect(fresh).toContain('Usage: loyalty members import');
});
