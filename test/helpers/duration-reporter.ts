import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

/**
 * Every run's per-file durations, kept as a JSON report (`test-artifacts/test-durations.json`,
 * CI keeps it as an artifact), and the suite's time against its budget, printed at the end: the
 * 20 slowest files, the wall time, and a warning when the run took longer than the budget
 * (`LOYALTY_TEST_BUDGET_SECONDS`, default 240: `npm test` on a 2-core machine).
 */
export default class DurationReporter implements Reporter {
  private started = performance.now();

  onTestRunStart() {
    this.started = performance.now();
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>) {
    const wallSeconds = (performance.now() - this.started) / 1000;
    const files = modules
      .map((m) => {
        const d = m.diagnostic();
        const tests = [...m.children.allTests()];
        return {
          project: m.project.name,
          file: path.relative(process.cwd(), m.moduleId),
          // From the worker's start of the file to its end: import, hooks and tests.
          seconds: round((d.prepareDuration + d.collectDuration + d.setupDuration + d.duration) / 1000),
          testsSeconds: round(d.duration / 1000),
          importSeconds: round((d.collectDuration + d.setupDuration) / 1000),
          tests: tests.length,
          state: m.state(),
          // What failed and why, in one line each: `npm test` prints them last, where a CI log's tail shows them.
          failures: [
            ...m.errors().map((e) => ({ test: '(file)', message: gist(e.message) })),
            ...tests
              .filter((t) => t.result().state === 'failed')
              .map((t) => ({ test: t.fullName, message: gist(t.result().errors?.[0]?.message) })),
          ],
          // Passed on a retry (the serial project retries once): shown, so a flaky bound is seen and fixed.
          flaky: tests
            .filter((t) => t.diagnostic()?.flaky)
            .map((t) => ({ test: t.fullName, message: gist(t.result().errors?.[0]?.message) })),
        };
      })
      .sort((a, b) => b.seconds - a.seconds);
    const budget = Number(process.env.LOYALTY_TEST_BUDGET_SECONDS ?? 240);
    const report = {
      finishedAt: new Date().toISOString(),
      wallSeconds: round(wallSeconds),
      budgetSeconds: budget,
      fileSecondsSum: round(files.reduce((s, f) => s + f.seconds, 0)),
      files,
    };
    const out = path.resolve(process.env.LOYALTY_TEST_DURATIONS ?? 'test-artifacts/test-durations.json');
    mkdirSync(path.dirname(out), { recursive: true });
    writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
    // Under `npm test` (scripts/test.mjs) the runner prints one summary for both of its lanes.
    if (process.env.LOYALTY_TEST_UNDER_RUNNER) return;
    const lines = files
      .slice(0, 20)
      .map((f) => `  ${f.seconds.toFixed(1).padStart(6)} s  ${f.project.padEnd(12)} ${f.file}`);
    const verdict =
      wallSeconds <= budget
        ? `within the ${budget} s budget`
        : `OVER the ${budget} s budget by ${round(wallSeconds - budget)} s: a slower suite is a regression`;
    console.log(
      [
        '',
        'Slowest test files (seconds, import and hooks included):',
        ...lines,
        `Suite: ${files.length} files, ${round(wallSeconds)} s wall (${report.fileSecondsSum} s of file time), ${verdict}.`,
        `Per-file durations: ${path.relative(process.cwd(), out)}`,
        '',
      ].join('\n'),
    );
  }
}

/**
 * A failure in one line: the message's first line, and its last when there are more. An assertion
 * with a message of its own (`expect(code, output).toBe(0)`) puts that message first and the
 * verdict (`expected 130 to be +0`) last: CI's log must show both.
 */
export function gist(message: string | undefined): string {
  const lines = (message ?? 'failed').split('\n').filter((line) => line.trim());
  const first = (lines[0] ?? 'failed').slice(0, 300);
  return lines.length > 1 ? `${first} … ${lines.at(-1)!.trim().slice(0, 300)}` : first;
}

function round(n: number) {
  return Math.round(n * 10) / 10;
}
