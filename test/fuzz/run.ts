import fc from 'fast-check';
import type { Server } from '@hapi/hapi';
import { listOperations, loadOpenApi, type Operation } from '../../server/src/lib/openapi.js';
import { createContractChecker } from '#test-helpers/contract.js';
import { requestsFor, type FuzzRequest, type Tokens } from './requests.js';
import type { Hints } from './schema-arbitrary.js';

export type OperationStats = { requests: number; statuses: Map<number, number>; serverErrors: number };
export type Failure = { operation: string; request: FuzzRequest; status: number; problems: string[]; body: string };
export type FuzzReport = {
  seed: number;
  requests: number;
  stats: Map<string, OperationStats>;
  /** Statuses by what was done to the request (`valid`, `body:nul`, …). */
  kinds: Map<string, Map<number, number>>;
  failures: Failure[];
  ms: number;
};

/** The requests of one operation are drawn in slices, so a run of 50,000 never holds them all. */
const SLICE = 200;

/**
 * Sends `runs` requests built from openapi.yaml (spread evenly over the operations) through
 * `server.inject` and checks each answer: never 5xx, a status the operation documents, a body
 * that matches its schema. Answers that matched no route of the API must be a 404 or 405.
 * Deterministic for a seed (the server's state aside: earlier requests may have created rows).
 */
export async function fuzzOperations(options: {
  server: Server;
  tokens: Tokens;
  hints: Hints;
  runs: number;
  seed: number;
  concurrency?: number;
  only?: (op: Operation) => boolean;
}): Promise<FuzzReport> {
  const { document } = loadOpenApi();
  const check = createContractChecker(document);
  const operations = listOperations(document).filter(options.only ?? (() => true));
  const perOperation = Math.ceil(options.runs / operations.length);
  const stats = new Map<string, OperationStats>();
  const failures: Failure[] = [];
  const kinds = new Map<string, Map<number, number>>();
  const started = Date.now();

  const fuzzOne = async (op: Operation, index: number) => {
    const name = `${op.method} ${op.path}`;
    const s: OperationStats = { requests: 0, statuses: new Map(), serverErrors: 0 };
    stats.set(name, s);
    const arbitrary = requestsFor(document, op, options.hints, options.tokens);
    for (let done = 0, slice = 0; done < perOperation; slice++) {
      const n = Math.min(SLICE, perOperation - done);
      const batch = fc.sample(arbitrary, { seed: (options.seed + index * 1_000_003 + slice * 7919) | 0, numRuns: n });
      for (const request of batch) {
        const res = await options.server.inject({
          method: request.method,
          url: request.url,
          headers: request.headers,
          ...(request.payload !== undefined && { payload: request.payload }),
        });
        s.requests++;
        s.statuses.set(res.statusCode, (s.statuses.get(res.statusCode) ?? 0) + 1);
        const k = kinds.get(request.kind) ?? kinds.set(request.kind, new Map()).get(request.kind)!;
        k.set(res.statusCode, (k.get(res.statusCode) ?? 0) + 1);
        const problems: string[] = [];
        if (res.statusCode >= 500) {
          s.serverErrors++;
          problems.push(`answered ${res.statusCode}`);
        }
        const route = res.request.route;
        if ((route.settings.plugins as { loyalty?: unknown }).loyalty) {
          try {
            problems.push(
              ...check(
                route.method,
                route.path,
                res.statusCode,
                String(res.headers['content-type'] ?? ''),
                res.payload,
              ),
            );
          } catch (error) {
            problems.push(`body is not JSON: ${(error as Error).message}`);
          }
        } else {
          // No route matched (an odd path, a URL that does not decode): still an answer to this operation.
          problems.push(
            ...check(op.method, op.path, res.statusCode, String(res.headers['content-type'] ?? ''), res.payload).map(
              (p) => `(no route matched) ${p}`,
            ),
          );
        }
        if (problems.length)
          failures.push({
            operation: name,
            request,
            status: res.statusCode,
            problems,
            body: res.payload.slice(0, 300),
          });
      }
      done += n;
    }
  };

  const queue = operations.map((op, i) => [op, i] as const);
  await Promise.all(
    Array.from({ length: options.concurrency ?? 4 }, async () => {
      for (let next = queue.shift(); next; next = queue.shift()) await fuzzOne(...next);
    }),
  );
  const requests = [...stats.values()].reduce((n, s) => n + s.requests, 0);
  return { seed: options.seed, requests, stats, kinds, failures, ms: Date.now() - started };
}

/** The per-operation table: requests, statuses seen (with counts) and 5xx. */
export function formatReport(report: FuzzReport): string {
  const rows = [...report.stats.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, s]) => [
      name,
      String(s.requests),
      [...s.statuses.entries()]
        .sort(([a], [b]) => a - b)
        .map(([code, n]) => `${code}×${n}`)
        .join(' '),
      String(s.serverErrors),
    ]);
  const header = ['operation', 'requests', 'statuses seen', '5xx'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === 1 || i === 3 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  const total5xx = [...report.stats.values()].reduce((n, s) => n + s.serverErrors, 0);
  const byKind = [...report.kinds.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(
      ([kind, m]) =>
        `  ${kind}: ${[...m.entries()]
          .sort(([a], [b]) => a - b)
          .map(([code, n]) => `${code}×${n}`)
          .join(' ')}`,
    );
  return [
    `fuzz seed ${report.seed} (replay: FUZZ_SEED=${report.seed}), ${report.requests} requests in ${(report.ms / 1000).toFixed(1)} s, ${total5xx} × 5xx, ${report.failures.length} contract failures`,
    line(header),
    line(widths.map((w) => '-'.repeat(w))),
    ...rows.map(line),
    '',
    'statuses by mutation:',
    ...byKind,
  ].join('\n');
}

/** Failures grouped by operation, mutation and status, one example each (the first seen). */
export function summarizeFailures(failures: Failure[]): string[] {
  const seen = new Map<string, { failure: Failure; count: number }>();
  for (const f of failures) {
    const key = `${f.operation} ${f.request.kind} ${f.request.as} → ${f.status}`;
    const entry = seen.get(key);
    if (entry) entry.count++;
    else seen.set(key, { failure: f, count: 1 });
  }
  return [...seen.entries()].map(([key, { failure: f, count }]) => {
    const payload =
      f.request.payload === undefined ? '' : ` payload ${JSON.stringify(f.request.payload.slice(0, 200))}`;
    return `${key} (${count}×): ${f.request.method} ${f.request.url.slice(0, 200)}${payload} content-type ${f.request.headers['content-type'] ?? '-'}: ${f.problems.join('; ').slice(0, 400)} body ${f.body}`;
  });
}
