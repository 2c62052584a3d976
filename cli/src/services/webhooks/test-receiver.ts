// `loyalty webhooks test-receiver`: sends a receiver the deliveries of test-receiver-cases.ts and
// scores its answers (status and time), with a hint for each case it gets wrong.
import type { Context } from '../../context.js';
import { CliError, PartialSuccess, usageError } from '../../errors.js';
import { type Column, renderTable } from '../../output.js';
import { readSecretFile, readSecretStdin } from '../../secrets.js';
import { CLI_VERSION } from '../../version.js';
import { type CaseName, type Delivery, type ReceiverCase, receiverCases, VALID_HINT } from './test-receiver-cases.js';

export interface TestReceiverOptions {
  secretFile?: string;
  secretStdin?: boolean;
  timeout: string;
}

/** What came back for one request: a status, or no answer (a timeout or a connection error). */
interface Answer {
  status: number | null;
  /** The start of a text answer, or why there was none. */
  text: string;
  ms: number;
  location?: string;
  timedOut?: boolean;
  connectionError?: boolean;
}

export interface CaseResult {
  case: CaseName;
  description: string;
  expected: '2xx' | '4xx';
  status: number | null;
  answer: string;
  ms: number;
  passed: boolean;
  hint?: string;
}

const ANSWER_CHARS = 200;

async function send(url: string, delivery: Delivery, timeoutMs: number, signal: AbortSignal): Promise<Answer> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const timeout = AbortSignal.timeout(timeoutMs);
  try {
    const response = await fetch(url, {
      method: 'POST',
      body: delivery.body,
      headers: delivery.headers,
      // Like the server: a redirect is an answer of its own, never followed.
      redirect: 'manual',
      signal: AbortSignal.any([timeout, signal]),
    });
    const text = (await response.text()).slice(0, ANSWER_CHARS).replace(/\s+/g, ' ').trim();
    const location = response.headers.get('location');
    return { status: response.status, text, ms: elapsed(), ...(location ? { location } : {}) };
  } catch (error) {
    if (signal.aborted) throw error;
    if (timeout.aborted)
      return { status: null, text: `no answer within ${timeoutMs} ms`, ms: elapsed(), timedOut: true };
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    return {
      status: null,
      text: cause?.code ?? cause?.message ?? (error as Error).message,
      ms: elapsed(),
      connectionError: true,
    };
  }
}

const is2xx = (status: number | null) => status !== null && status >= 200 && status < 300;
/** A final refusal: the server retries 408 and 429 like a 5xx. */
const isFinal4xx = (status: number | null) =>
  status !== null && status >= 400 && status < 500 && status !== 408 && status !== 429;

/** The hint for an answer that is not the expected one: about the answer's kind first, then the case's own. */
function hintFor(expected: '2xx' | '4xx', answer: Answer, caseHint: string, timeoutMs: number): string {
  if (answer.timedOut)
    return `No answer within ${timeoutMs} ms: acknowledge first (2xx) and do the work afterwards (a queue); the server waits 5 s, then retries.`;
  if (answer.connectionError) return `No connection (${answer.text}): is the receiver running at this URL?`;
  const status = answer.status ?? 0;
  if (status >= 300 && status < 400)
    return `It answered a redirect (${status}${answer.location ? ` to ${answer.location}` : ''}); deliveries do not follow redirects: subscribe the final URL.`;
  if (expected === '4xx' && (status >= 500 || status === 408 || status === 429))
    return `It answered ${status}: answer 4xx to a delivery that does not verify; ${status} makes the server retry it, up to 8 attempts.`;
  if (expected === '2xx' && status >= 500)
    return `It failed (${status}) on a correctly signed delivery; the server retries it, up to 8 attempts. ${caseHint}`;
  return caseHint;
}

/** The hint of a failed case; a case that fails like the valid one points there. */
function failedHint(
  c: ReceiverCase,
  answer: Answer,
  earlier: Answer | undefined,
  valid: CaseResult | undefined,
  timeoutMs: number,
): string {
  if (c.expected === '2xx' && valid && !valid.passed && (earlier ?? answer).status === valid.status)
    return `Answered like the valid delivery (${valid.status ?? valid.answer}): fix that case first.`;
  if (earlier)
    return `The first delivery was not acknowledged (${earlier.status ?? earlier.text}). ${hintFor('2xx', earlier, VALID_HINT, timeoutMs)}`;
  return hintFor(c.expected, answer, c.hint, timeoutMs);
}

/** Sends every case in turn and scores the answers. */
export async function testReceiver(
  url: string,
  secret: string,
  options: { timeoutMs: number; signal: AbortSignal; now?: Date },
): Promise<CaseResult[]> {
  const results: CaseResult[] = [];
  const cases = receiverCases(secret, options.now ?? new Date(), `loyalty-cli/${CLI_VERSION} (test-receiver)`);
  for (const c of cases) {
    const answers: Answer[] = [];
    for (const delivery of c.deliveries) answers.push(await send(url, delivery, options.timeoutMs, options.signal));
    const answer = answers.at(-1) as Answer;
    const earlier = answers.slice(0, -1).find((a) => !is2xx(a.status));
    const passed = (c.expected === '2xx' ? is2xx(answer.status) : isFinal4xx(answer.status)) && !earlier;
    const result: CaseResult = {
      case: c.name,
      description: c.description,
      expected: c.expected,
      status: answer.status,
      answer: answer.text,
      ms: answer.ms,
      passed,
    };
    if (!passed) result.hint = failedHint(c, answer, earlier, results[0], options.timeoutMs);
    results.push(result);
  }
  return results;
}

async function receiverSecret(ctx: Context, options: TestReceiverOptions): Promise<string> {
  const secret =
    options.secretFile !== undefined
      ? await readSecretFile(options.secretFile, ctx.runtime, '--secret-file')
      : options.secretStdin
        ? await readSecretStdin(ctx.runtime, '--secret-stdin')
        : ctx.runtime.env.LOYALTY_WEBHOOK_SECRET?.trim();
  if (!secret)
    throw usageError(
      'No secret given.',
      "Pass --secret-file <path> or --secret-stdin, or set LOYALTY_WEBHOOK_SECRET: the receiver's secret.",
    );
  if (!/^whsec_[A-Za-z0-9+/]+={0,2}$/.test(secret))
    throw usageError('The secret is not a webhook secret: it must be "whsec_" followed by base64.');
  return secret;
}

export async function testReceiverCommand(ctx: Context, url: string, options: TestReceiverOptions): Promise<void> {
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol))
    throw usageError(`<url> must be an http(s) URL, got ${JSON.stringify(url)}.`);
  const seconds = Number(options.timeout);
  if (options.timeout.trim() === '' || !Number.isFinite(seconds) || seconds <= 0)
    throw usageError('--timeout must be a positive number of seconds.');
  const secret = await receiverSecret(ctx, options);
  const timeoutMs = Math.round(seconds * 1000);
  const results = await testReceiver(url, secret, { timeoutMs, signal: ctx.signal });

  const failed = results.filter((r) => !r.passed);
  const { out } = ctx.output;
  const columns: Column<CaseResult>[] = [
    { header: 'case', value: (r) => r.case },
    { header: 'sends', value: (r) => r.description, shrink: true },
    { header: 'expects', value: (r) => r.expected, shrink: true },
    { header: 'got', value: (r) => (r.status === null ? r.answer : `${r.status} ${r.answer}`.slice(0, 40).trim()) },
    { header: 'ms', value: (r) => r.ms },
    { header: 'result', value: (r) => (r.passed ? out.green('pass') : out.red('FAIL')) },
  ];
  ctx.output.result({ url, passed: failed.length === 0, timeout_ms: timeoutMs, cases: results }, () =>
    [
      renderTable(results, columns, out, ctx.output.width).trimEnd(),
      ...(failed.length > 0 ? [''] : []),
      ...failed.map((r) => `${out.red('✖')} ${r.case}: ${r.hint}`),
    ].join('\n'),
  );
  if (failed.length === 0) {
    ctx.output.success(`All ${results.length} cases passed.`);
    return;
  }
  if (results.every((r) => r.status === null && !r.answer.startsWith('no answer')))
    throw new CliError(`Cannot reach ${url}: ${results[0]?.answer}.`, { hint: 'Is the receiver running at this URL?' });
  throw new PartialSuccess(
    `${failed.length} of ${results.length} cases failed: ${failed.map((r) => r.case).join(', ')}.`,
  );
}
