// Types of server-bundled-postgres.mjs for the TypeScript tests that import it.
/** The builds of the postgres.js in `dir` whose nextWrite still writes to a closed socket (none: []). */
export function unrepairedBuilds(dir: string): string[];
