import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

// The core an integrator ships: the client with retries, idempotency keys, pacing and tokens,
// openapi-fetch included. Budget: 8 KB minified and gzipped.
const BUDGET = 8 * 1024;
const src = (file: string) => fileURLToPath(new URL(file, import.meta.url));
const entry = `export { createLoyaltyClient } from ${JSON.stringify(src('./client.ts'))};
export { wasReplayed } from ${JSON.stringify(src('./idempotency.ts'))};
export { toLoyaltyError } from ${JSON.stringify(src('./errors.ts'))};`;

/**
 * Minified bundle of `entry`, from the sources. esbuild is not installed here; rolldown is (vite's
 * bundler, through vitest), so no extra dependency is needed. Either one is used when present.
 */
async function bundle(): Promise<string> {
  try {
    const esbuild = 'esbuild';
    const { build } = await import(/* @vite-ignore */ esbuild);
    const out = await build({
      stdin: { contents: entry, resolveDir: src('.'), loader: 'ts' },
      bundle: true,
      minify: true,
      format: 'esm',
      write: false,
      platform: 'neutral',
    });
    return out.outputFiles[0].text;
  } catch {
    const { build } = await import('rolldown');
    const out = await build({
      input: 'sdk-core',
      write: false,
      platform: 'neutral',
      resolve: { extensionAlias: { '.js': ['.ts', '.js'] } },
      plugins: [
        {
          name: 'sdk-core',
          resolveId: (id) => (id === 'sdk-core' ? id : null),
          load: (id) => (id === 'sdk-core' ? entry : null),
        },
      ],
      output: { format: 'esm', minify: true },
      logLevel: 'silent',
    });
    return out.output[0].code;
  }
}

it(`keeps the core (client, retry, idempotency, pacing, openapi-fetch) under ${BUDGET / 1024} KB minified + gzipped`, async () => {
  const code = await bundle();
  const gzipped = gzipSync(code).length;
  console.log(`sdk core: ${code.length} B minified, ${gzipped} B gzipped (budget ${BUDGET} B)`);
  expect(code).toContain('idempotency-key');
  expect(code).not.toMatch(/from\s*["']msw/);
  expect(gzipped).toBeLessThan(BUDGET);
}, 60_000);
