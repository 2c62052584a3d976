// `loyalty wallet simulate <pass-code>`: a phone holding a pass (the SDK's WalletDevice) on a
// sandbox server: download, verify against the sandbox CA, register, then for each push the
// updated serials, the new version and its changes, until Ctrl-C unregisters it.
import { setTimeout as sleep } from 'node:timers/promises';
import { isLoyaltyError, type LoyaltyError } from '@loyalty/sdk';
import { type DeviceWalletPass, type PassChange, passFields, WalletDevice } from '@loyalty/sdk/wallet';
import { type Context, requireHttpUrl } from '../../context.js';
import { CliError, ExitCode } from '../../errors.js';
import { observedFetch } from '../../request-log.js';
import { notInSandboxMode } from '../sandbox/sandbox.js';
import { inspectPkpass } from './inspect-pass.js';
import { certificatesFromPem } from './pass-signature.js';

export interface SimulateOptions {
  /** false with --no-verify. */
  verify: boolean;
}

/** How long one long poll of the push sink waits (the sink allows 30 s). */
const WAIT_SECONDS = 25;

type Step =
  | 'download'
  | 'verify'
  | 'register'
  | 'wait for pushes'
  | 'list updated passes'
  | 'fetch the pass'
  | 'unregister';

/** A failure of the device, said as the CLI says failures: what happened and what to do. */
function failure(ctx: Context, step: Step, error: LoyaltyError, code: string): CliError {
  if (error.code === 'network_error')
    return new CliError(`${ctx.apiUrl} is not answering (${step}): ${error.message}.`, {
      hint: 'Is the server running? Start one with `loyalty server`, or point --api-url at it.',
      cause: error,
    });
  if (step === 'download' && error.status === 404)
    return new CliError(`No pass has the code ${JSON.stringify(code)} on ${ctx.apiUrl}.`, {
      hint: 'The code is the pass_code that `loyalty passes issue` prints (the end of its wallet link).',
      cause: error,
    });
  if (step === 'wait for pushes' && error.status === 404)
    return new CliError(`${notInSandboxMode(ctx).message} It has no push sink to simulate a phone with.`, {
      hint: `${notInSandboxMode(ctx).hint} A real server sends its pushes to APNs, which only a real phone receives.`,
      cause: error,
    });
  if (error.status === 401)
    return new CliError(`The pass web service refused the pass's authenticationToken (${step}).`, { cause: error });
  return new CliError(`Could not ${step}: ${error.message}${error.status ? ` (HTTP ${error.status})` : ''}.`, {
    cause: error,
  });
}

const fieldsOf = (pass: DeviceWalletPass) =>
  Object.fromEntries(passFields(pass.passJson).map((f) => [f.key, f.value] as const));

const clock = () => new Date().toTimeString().slice(0, 8);

/** `balance 120 → 170`, then what the phone shows when it is something else ("Balance 170"). */
export function changeLine(change: PassChange): string {
  const shown = (v: PassChange['from']) => (v === undefined ? '—' : String(v));
  const diff = `${change.key} ${shown(change.from)} → ${shown(change.to)}`;
  return change.message.toLowerCase() === diff.toLowerCase() ? diff : `${diff}  · ${change.message}`;
}

export async function simulateCommand(ctx: Context, code: string, options: SimulateOptions): Promise<void> {
  requireHttpUrl(ctx.config);
  const { output, signal } = ctx;
  const observed = observedFetch(ctx.runtime, ctx.options.debug ? output : undefined);
  const fetch = (input: string | URL | Request, init?: RequestInit) => observed(new Request(input, init));
  const device = new WalletDevice({ baseUrl: ctx.apiUrl, fetch });
  const line = (event: Record<string, unknown>, human: string, toStdout = false) => {
    if (output.json) output.jsonLine(event);
    else if (toStdout) output.write(human);
    else output.success(human);
  };
  const attempt = async <T>(step: Step, call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (error) {
      if (isLoyaltyError(error)) throw failure(ctx, step, error, code);
      throw error;
    }
  };

  const pass = await attempt('download', () => device.download(code, { signal }));
  const { passJson } = pass;
  const fields = fieldsOf(pass);
  line(
    {
      event: 'downloaded',
      code,
      serial_number: passJson.serialNumber,
      pass_type_identifier: passJson.passTypeIdentifier,
      organization_name: passJson.organizationName,
      fields,
      voided: passJson.voided === true,
      expiration_date: passJson.expirationDate ?? null,
    },
    `Downloaded the pass of ${passJson.organizationName} (${passJson.serialNumber}): ${
      Object.entries(fields)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ') || 'no fields'
    }${passJson.voided ? ' (voided)' : ''}.`,
  );

  if (options.verify) await verify(ctx, device, fetch, line);

  await attempt('register', () => device.register({ signal }));
  line(
    { event: 'registered', device_library_identifier: device.deviceLibraryIdentifier },
    `Registered as device ${device.deviceLibraryIdentifier}; waiting for updates (Ctrl-C to stop).`,
  );

  /** The new version, if any; `listed`: the web service listed the pass as updated since the last tag. */
  const showUpdate = async (listed: boolean) => {
    let latest = await attempt('fetch the pass', () => device.fetchLatest({ signal }));
    if (!latest.changed && listed) {
      // Listed as updated, yet 304: is there a newer pass.json that a phone would miss?
      const since = device.pass?.lastModified;
      const fresh = await attempt('fetch the pass', () => device.fetchLatest({ signal, conditional: false }));
      if (!fresh.changed || JSON.stringify(fresh.previous.passJson) === JSON.stringify(fresh.pass.passJson)) return;
      output.warn(
        `The web service listed the pass as updated but answered 304 Not Modified to If-Modified-Since ${since}, and the pass had changed: its Last-Modified did not move on (a change within the same second?). A phone would have missed this update.`,
      );
      latest = fresh;
    }
    if (!latest.changed) return;
    line(
      {
        event: 'updated',
        serial_number: latest.pass.passJson.serialNumber,
        last_modified: latest.pass.lastModified ?? null,
        changes: latest.changes,
        fields: fieldsOf(latest.pass),
        voided: latest.pass.passJson.voided === true,
      },
      latest.changes.length
        ? latest.changes.map((c) => `${clock()}  ${changeLine(c)}`).join('\n')
        : `${clock()}  a new version with no visible change`,
      true,
    );
  };

  let failures = 0;
  // A change between the download and the registration sent its push to nobody: catch up once.
  let catchUp = true;
  try {
    while (!signal.aborted) {
      try {
        if (catchUp) {
          await showUpdate(false);
          catchUp = false;
        }
        const pushes = await attempt('wait for pushes', () =>
          device.waitForPush({ signal, waitSeconds: WAIT_SECONDS }),
        );
        if (failures > 0) output.success(`Reconnected to ${ctx.apiUrl}.`);
        failures = 0;
        if (pushes.length === 0) continue;
        if (output.json) output.jsonLine({ event: 'push', pushes });
        const serials = await attempt('list updated passes', () => device.updatedSerials({ signal }));
        if (serials.includes(passJson.serialNumber)) await showUpdate(true);
      } catch (error) {
        if (signal.aborted) break;
        const transient =
          error instanceof CliError && isLoyaltyError(error.cause) && error.cause.code === 'network_error';
        if (!transient) throw error;
        failures += 1;
        const delay = Math.min(5, failures);
        output.warn(`${(error as Error).message} Trying again in ${delay} s…`);
        await sleep(delay * 1000, undefined, { signal }).catch(() => undefined);
      }
    }
  } finally {
    // Unregister also after Ctrl-C (its own time limit), as a phone does when the pass is removed.
    try {
      await device.unregister({ signal: AbortSignal.timeout(5000) });
      line({ event: 'unregistered' }, 'Unregistered the device.');
    } catch (error) {
      output.warn(`Could not unregister the device: ${(error as Error).message}`);
    }
  }
  throw new CliError('', { exitCode: ExitCode.interrupted });
}

/** The pass checked as `wallet inspect --ca` checks it, against the server's sandbox CA. */
async function verify(
  ctx: Context,
  device: WalletDevice,
  fetch: (input: string) => Promise<Response>,
  line: (event: Record<string, unknown>, human: string) => void,
): Promise<void> {
  const url = `${ctx.apiUrl}/sandbox/wallet/ca.pem`;
  let response: Response;
  try {
    response = await fetch(url);
  } catch (error) {
    throw new CliError(`${ctx.apiUrl} is not answering (verify): ${(error as Error).message}.`, { cause: error });
  }
  if (response.status === 404) {
    await response.text().catch(() => undefined);
    throw new CliError(`${notInSandboxMode(ctx).message} It has no sandbox CA or push sink to simulate a phone with.`, {
      hint: `${notInSandboxMode(ctx).hint} A real server sends its pushes to APNs, which only a real phone receives.`,
    });
  }
  if (!response.ok) throw new CliError(`GET ${url} answered HTTP ${response.status}.`);
  const ca = certificatesFromPem(await response.text());
  if (ca.length === 0) throw new CliError(`GET ${url} answered no PEM certificate.`);
  const pass = device.pass as DeviceWalletPass;
  const { problems, checked } = await inspectPkpass(pass.buffer, { ca });
  if (problems.length > 0) {
    for (const p of problems) ctx.output.error(`${p.message} (fix: ${p.fix})`);
    throw new CliError(`The pass would not install on a phone: ${problems.length} problem(s) above.`, {
      hint: 'Save it with `curl -o pass.pkpass …` and run `loyalty wallet inspect pass.pkpass --ca ca.pem` for details.',
    });
  }
  line(
    { event: 'verified', chain: checked.chain, signer: checked.signer?.subject ?? null, files: checked.files },
    `Verified: manifest of ${checked.files.length} files, signature by ${checked.signer?.subject ?? '?'} chained to the sandbox CA.`,
  );
}
