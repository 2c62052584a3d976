// `loyalty wallet inspect <file.pkpass>`: offline, one line per reason the pass would not install,
// each with its fix. Exit codes as `webhooks verify`: 0 installable, 1 problems (or an unreadable
// pass), 2 usage (a --ca that is missing or not PEM).
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Context } from '../../context.js';
import { CliError, usageError } from '../../errors.js';
import { type Inspection, inspectPkpass } from './inspect-pass.js';
import { certificatesFromPem } from './pass-signature.js';

export interface InspectCommandOptions {
  ca?: string;
}

/** An unreadable pass is exit 1 (as `webhooks verify`'s unreadable payload); an unreadable --ca, an option's value, is a usage error (2). */
async function readInput(ctx: Context, path: string, what: 'the pass' | '--ca'): Promise<Buffer> {
  try {
    return await readFile(resolve(ctx.runtime.cwd, path));
  } catch (error) {
    const message = `Cannot read ${what} ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`;
    throw what === '--ca' ? usageError(message) : new CliError(message);
  }
}

export async function inspectCommand(ctx: Context, file: string, options: InspectCommandOptions): Promise<void> {
  let ca: ReturnType<typeof certificatesFromPem> | undefined;
  if (options.ca !== undefined) {
    try {
      ca = certificatesFromPem((await readInput(ctx, options.ca, '--ca')).toString('utf8'));
    } catch (error) {
      if (error instanceof CliError) throw error;
      throw usageError(`--ca ${options.ca}: not a PEM certificate (${(error as Error).message}).`);
    }
    if (ca.length === 0)
      throw usageError(
        `--ca ${options.ca} holds no PEM certificate.`,
        'Give the CA certificate as PEM (-----BEGIN CERTIFICATE-----), e.g. a sandbox server’s /sandbox/wallet/ca.pem.',
      );
  }
  const inspection = await inspectPkpass(await readInput(ctx, file, 'the pass'), ca ? { ca } : {});
  report(ctx, file, inspection);
  const count = inspection.problems.length;
  if (count > 0)
    throw new CliError(`${file} would not install: ${count} problem${count === 1 ? '' : 's'}.`, {
      hint: 'Each problem above says its fix.',
    });
}

function report(ctx: Context, file: string, { problems, checked }: Inspection): void {
  const { out } = ctx.output;
  ctx.output.result({ valid: problems.length === 0, problems, checked }, () => {
    const lines = problems.map((p) => `${out.red('✖')} ${p.message}\n    fix: ${p.fix}`);
    if (problems.length === 0) lines.push(`${out.green('✔')} ${file}: no problem found; a wallet should install it.`);
    lines.push(
      out.dim(`Checked: ${checked.files.length} files (${checked.files.join(', ') || 'none'}); manifest SHA-1s;`),
      out.dim(
        checked.chain
          ? `  signature chain against ${checked.chain};`
          : '  no signature chain (no signature of a manifest to check);',
      ),
      ...(checked.signer ? [out.dim(`  signer ${checked.signer.subject}, valid to ${checked.signer.valid_to};`)] : []),
      out.dim('  pass.json keys, dates, barcodes; icon.png.'),
    );
    return lines.join('\n');
  });
}
