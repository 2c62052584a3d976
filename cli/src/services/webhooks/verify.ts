// `loyalty webhooks verify`: checks a captured delivery offline with the SDK's verifier and
// says why it fails (body changed or wrong secret, stale timestamp, missing header…).
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { verifySignature, verifyStandardWebhook, WebhookVerificationError } from '@loyalty/sdk/webhooks';
import type { Context } from '../../context.js';
import { CliError, usageError } from '../../errors.js';
import { readSecretLines, readStdin } from '../../secrets.js';
import type { Runtime } from '../../runtime.js';
import { type Explanation, explainSignatureFailure } from './signature-mistakes.js';

export interface VerifyOptions {
  secretFile: string[];
  secretStdin?: boolean;
  signature?: string;
  headersFile?: string;
  tolerance: string;
  explain?: boolean;
  previousSecretFile: string[];
}

type CheckedHeader = 'Loyalty-Signature' | 'webhook-signature';
export type Check =
  | { header: CheckedHeader; valid: true }
  | { header: CheckedHeader; valid: false; reason: string; message: string; explanation?: Explanation };

/** Headers captured as JSON (`{"name": "value"}`) or as HTTP text (`Name: value` lines). */
export function parseHeaders(text: string): Record<string, string> {
  const trimmed = text.trim();
  if (trimmed.startsWith('{')) {
    const parsed = JSON.parse(trimmed) as Record<string, unknown>;
    return Object.fromEntries(
      Object.entries(parsed).map(([name, value]) => [
        name.toLowerCase(),
        Array.isArray(value) ? value.join(' ') : String(value),
      ]),
    );
  }
  const headers: Record<string, string> = {};
  for (const line of trimmed.split(/\r?\n/)) {
    if (line.trim() === '') break; // the body follows a blank line in a raw request dump
    const colon = line.indexOf(':');
    if (colon <= 0 || /^(GET|POST|PUT|HTTP)\b/.test(line)) continue;
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return headers;
}

const REASONS: Record<string, string> = {
  signature_mismatch: 'the body was changed or the secret is wrong',
  stale_timestamp: 'stale timestamp',
  missing_header: 'a header is missing',
  malformed_header: 'a header is malformed',
  secret_format: 'the secret is not a whsec_ secret',
  secret_whitespace: 'the secret has whitespace around it',
  body_not_raw: 'the body is not raw bytes',
};

function check(header: Check['header'], verify: () => void): Check {
  try {
    verify();
    return { header, valid: true };
  } catch (error) {
    if (error instanceof WebhookVerificationError)
      return { header, valid: false, reason: error.reason, message: error.message };
    throw error;
  }
}

export function verifyDelivery(
  body: Buffer,
  secrets: readonly string[],
  input: {
    signature?: string | undefined;
    headers?: Record<string, string> | undefined;
    toleranceSeconds: number;
    now?: Date;
    /** Try the usual mistakes on each failed check (`--explain`), with secrets that are no longer (or not yet) valid. */
    explain?: { previousSecrets: readonly string[] };
  },
): Check[] {
  const checks: Check[] = [];
  const loyaltySignature = input.signature ?? input.headers?.['loyalty-signature'];
  const explained = (c: Check, signature: string | undefined, id?: string, timestamp?: string): Check => {
    if (c.valid || !input.explain || signature === undefined) return c;
    const explanation = explainSignatureFailure(
      { header: c.header, signature, id, timestamp },
      c.reason,
      body,
      { current: secrets, previous: input.explain.previousSecrets },
      { toleranceSeconds: input.toleranceSeconds, now: input.now },
    );
    return explanation ? { ...c, explanation } : c;
  };
  if (loyaltySignature !== undefined)
    checks.push(
      explained(
        check('Loyalty-Signature', () => verifySignature(body, loyaltySignature, secrets)),
        loyaltySignature,
      ),
    );
  const { headers } = input;
  if (headers && (headers['webhook-signature'] || headers['webhook-timestamp'])) {
    const options = { tolerance: input.toleranceSeconds, ...(input.now ? { now: input.now } : {}) };
    checks.push(
      explained(
        check('webhook-signature', () => verifyStandardWebhook(body, headers, secrets, options)),
        headers['webhook-signature'],
        headers['webhook-id'],
        headers['webhook-timestamp'],
      ),
    );
  }
  return checks;
}

/** The lines under a failed check: the mistakes found, or what was tried. */
export function explanationLines(explanation: Explanation): string[] {
  const lines = explanation.mistakes.flatMap((m) => [`  → ${m.what}`, `    fix: ${m.fix}`]);
  if (!explanation.signatureReproduced) {
    lines.push(
      explanation.mistakes.length > 0
        ? '  → The signature does not match either, and no usual mistake explains it.'
        : '  → No usual mistake explains it: the secret is most likely not the one that signed, or the body was changed otherwise.',
      `    tried: ${explanation.tried.join('; ')}`,
    );
  }
  return lines;
}

/** What reads stdin, in the order the usage error names them; only one of them can. */
function stdinReaders(file: string | undefined, options: VerifyOptions): string[] {
  return [
    ...(options.secretStdin || [...options.secretFile, ...options.previousSecretFile].includes('-') ? ['secret'] : []),
    ...((file ?? '-') === '-' ? ['body'] : []),
    ...(options.headersFile === '-' ? ['headers'] : []),
  ];
}

/** Secrets from files and stdin (several for a rotation); LOYALTY_WEBHOOK_SECRET when none is given. */
async function webhookSecrets(runtime: Runtime, options: VerifyOptions): Promise<string[]> {
  const secrets: string[] = [];
  for (const path of options.secretFile)
    if (path !== '-') secrets.push(...(await readSecretLines(path, runtime, '--secret-file')));
  if (options.secretStdin || options.secretFile.includes('-')) {
    secrets.push(...(await readSecretLines('-', runtime, options.secretStdin ? '--secret-stdin' : '--secret-file')));
  }
  if (secrets.length === 0 && runtime.env.LOYALTY_WEBHOOK_SECRET) secrets.push(runtime.env.LOYALTY_WEBHOOK_SECRET);
  if (secrets.length === 0)
    throw usageError('No secret given.', 'Pass --secret-file <path> or --secret-stdin, or set LOYALTY_WEBHOOK_SECRET.');
  return secrets;
}

export async function verifyCommand(ctx: Context, file: string | undefined, options: VerifyOptions): Promise<void> {
  if (Boolean(options.signature) === Boolean(options.headersFile))
    throw usageError('Pass exactly one of --signature and --headers-file.');
  const tolerance = Number(options.tolerance);
  if (!Number.isFinite(tolerance) || tolerance < 0) throw usageError('--tolerance must be a number of seconds.');
  const [first, second] = stdinReaders(file, options);
  if (second) {
    throw usageError(
      `stdin cannot hold both the ${first} and the ${second}.`,
      first === 'secret'
        ? `Pass the ${second} as a file, or the secret with --secret-file <path> or LOYALTY_WEBHOOK_SECRET.`
        : 'Pass one of them as a file.',
    );
  }
  if (options.previousSecretFile.length > 0 && !options.explain)
    throw usageError(
      '--previous-secret-file is only read with --explain.',
      'Add --explain, or give both secrets with --secret-file.',
    );
  if (options.previousSecretFile.includes('-') && (options.secretStdin || options.secretFile.includes('-')))
    throw usageError('stdin cannot hold both the secret and the previous secret.', 'Pass one of them as a file.');
  const secrets = await webhookSecrets(ctx.runtime, options);
  const previousSecrets: string[] = [];
  for (const path of options.previousSecretFile)
    previousSecrets.push(...(await readSecretLines(path, ctx.runtime, '--previous-secret-file')));

  const readBytes = async (path: string): Promise<Buffer> => {
    try {
      return path === '-'
        ? Buffer.from(await readStdin(ctx.runtime.stdin), 'utf8')
        : await readFile(resolve(ctx.runtime.cwd, path));
    } catch (error) {
      throw new CliError(`Cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`);
    }
  };
  const headers = options.headersFile
    ? parseHeaders((await readBytes(options.headersFile)).toString('utf8'))
    : undefined;
  const body = await readBytes(file ?? '-');
  const checks = verifyDelivery(body, secrets, {
    signature: options.signature,
    headers,
    toleranceSeconds: tolerance,
    ...(options.explain ? { explain: { previousSecrets } } : {}),
  });
  if (checks.length === 0)
    throw usageError(`${options.headersFile} has neither Loyalty-Signature nor webhook-signature.`);

  const failed = checks.find((c) => !c.valid);
  ctx.output.result({ valid: failed === undefined, checks }, () =>
    checks
      .map((c) =>
        c.valid
          ? `${ctx.output.out.green('✔')} ${c.header}: valid`
          : [
              `${ctx.output.out.red('✖')} ${c.header}: invalid — ${REASONS[c.reason] ?? c.reason}`,
              ...(c.explanation ? explanationLines(c.explanation) : []),
            ].join('\n'),
      )
      .join('\n'),
  );
  if (failed) {
    const newline =
      body.length > 0 && body[body.length - 1] === 0x0a
        ? ' The body file ends with a newline: was one added when it was saved?'
        : '';
    const explained = checks.flatMap((c) => (!c.valid && c.explanation ? c.explanation.mistakes : []));
    throw new CliError(`The delivery does not verify: ${REASONS[failed.reason] ?? failed.reason}.`, {
      hint:
        explained.length > 0
          ? 'The likely mistake and its fix are under each failed check above.'
          : `${failed.message}${failed.reason === 'signature_mismatch' && !options.explain ? newline : ''}${options.explain ? '' : ' `--explain` tries the usual mistakes.'}`,
    });
  }
}
