import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
// The local binary, run by the Node that runs the tests (the project's pinned Node 24).
const redocly = path.join(root, 'node_modules/.bin/redocly');

type LintTotals = { errors: number; warnings: number; ignored: number };
type LintProblem = { ruleId: string; severity: string; message: string; location?: { pointer?: string }[] };

function lint(file: string): Promise<{ code: number; totals: LintTotals; problems: LintProblem[]; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [redocly, 'lint', file, '--config', path.join(root, 'redocly.yaml'), '--format', 'json'],
      { cwd: root, maxBuffer: 32 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        try {
          const report = JSON.parse(stdout) as { totals: LintTotals; problems: LintProblem[] };
          resolve({ code, totals: report.totals, problems: report.problems, stderr });
        } catch {
          reject(new Error(`redocly lint printed no JSON report (exit ${code}):\n${stderr}\n${stdout}`));
        }
      },
    );
  });
}

const describeProblems = (problems: LintProblem[]) =>
  problems.map((p) => `${p.severity} ${p.ruleId} at ${p.location?.[0]?.pointer ?? '?'}: ${p.message}`).join('\n');

describe('openapi.yaml lint (redocly, recommended rules from redocly.yaml)', () => {
  it('reports no errors and no warnings', async () => {
    const result = await lint('openapi.yaml');
    expect(describeProblems(result.problems)).toBe('');
    expect(result.totals.errors).toBe(0);
    expect(result.totals.warnings).toBe(0);
    expect(result.code).toBe(0);
  }, 60_000);

  it('fails on a document with an error (the check can fail)', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'loyalty-lint-'));
    try {
      // An operation without a summary breaks the recommended `operation-summary` rule (an error).
      const broken = (await readFile(path.join(root, 'openapi.yaml'), 'utf8')).replace(
        /\n {6}summary: List tags\n/,
        '\n',
      );
      const file = path.join(dir, 'openapi.yaml');
      await writeFile(file, broken);
      const result = await lint(file);
      expect(result.totals.errors).toBeGreaterThan(0);
      expect(result.problems.map((p) => p.ruleId)).toContain('operation-summary');
      expect(result.code).not.toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
