// A committed migration is never edited: a database that applied it keeps what it did, and an
// edit reaches only new databases. server/migrations/SHA256SUMS holds the SHA-256 of every
// migration (the `sha256sum` format: `cd server/migrations && sha256sum -c SHA256SUMS` checks them);
// test/contract/migrations-sealed.test.ts fails when a file differs from its line, or has none.
//
//   npm run migrations:seal    adds the lines of new migrations; never changes an existing line
//
// (A migration not yet on main may still change: delete its line, edit, seal again.)
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const migrationsDir = fileURLToPath(new URL('../server/migrations/', import.meta.url));
const SUMS = 'SHA256SUMS';

const sha256 = (file) => createHash('sha256').update(readFileSync(file)).digest('hex');

/** `{ file: sha256 }` from the SHA256SUMS of `dir` (none: empty). */
function sealed(dir) {
  const sums = path.join(dir, SUMS);
  if (!existsSync(sums)) return {};
  return Object.fromEntries(
    readFileSync(sums, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const [, hash, file] = /^([0-9a-f]{64}) [ *](.+)$/.exec(line) ?? [];
        if (!hash) throw new Error(`${sums}: not a sha256sum line: ${line}`);
        return [file, hash];
      }),
  );
}

const migrations = (dir) =>
  readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort();

/** What is wrong with the migrations of `dir` against their SHA256SUMS, one sentence each; none: []. */
export function checkMigrations(dir = migrationsDir) {
  const sums = sealed(dir);
  const present = migrations(dir);
  const problems = [];
  for (const file of present) {
    if (!sums[file])
      problems.push(`${file} is not sealed: run \`npm run migrations:seal\` and commit SHA256SUMS with it.`);
    else if (sha256(path.join(dir, file)) !== sums[file])
      problems.push(
        `${file} changed after it was committed: migrations are never edited, add a new file (server/migrations/, the next number) that makes the change.`,
      );
  }
  for (const file of Object.keys(sums))
    if (!present.includes(file))
      problems.push(`${file} is sealed but gone: migrations are never removed, restore it from git.`);
  return problems;
}

/** Adds the lines of unsealed migrations to SHA256SUMS; refuses while a sealed one differs. */
function seal(dir = migrationsDir) {
  const changed = checkMigrations(dir).filter((problem) => !problem.includes('is not sealed'));
  if (changed.length > 0) {
    console.error(changed.join('\n'));
    process.exit(1);
  }
  const sums = sealed(dir);
  const added = migrations(dir).filter((file) => !sums[file]);
  for (const file of added) sums[file] = sha256(path.join(dir, file));
  const lines = Object.keys(sums)
    .sort()
    .map((file) => `${sums[file]}  ${file}\n`);
  writeFileSync(path.join(dir, SUMS), lines.join(''));
  console.log(added.length ? `sealed ${added.join(', ')}` : 'every migration is sealed');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) seal();
