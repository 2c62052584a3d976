// Types of seal-migrations.mjs for the TypeScript tests that import it.
export const migrationsDir: string;
/** What is wrong with the migrations of `dir` (default: server/migrations) against their SHA256SUMS, one sentence each; none: []. */
export function checkMigrations(dir?: string): string[];
