// A webhook URL the server refuses (422 on `url`): said once, with the way forward. The server
// takes only https:// on a public host unless it runs with insecure webhooks allowed, so a
// receiver on this machine needs `listen --forward-to`, or a local server started to allow it.
import { type LoyaltyError, toLoyaltyError } from '@loyalty/sdk';
import type { Context } from '../../context.js';
import { CliError } from '../../errors.js';
import { requestIdSuffix } from '../../request-log.js';
import { type ApiResult, type DataOf, dataOf, request, type Send } from '../common/api.js';

export const LOCAL_RECEIVER_HINT =
  'For a receiver on this machine, forward events to it with `loyalty webhooks listen --forward-to <url>` ' +
  '(no subscription needed), or start a local server that accepts such URLs: ' +
  '`loyalty server --webhook-allow-insecure` (LOYALTY_WEBHOOK_ALLOW_INSECURE=1), for development only.';

export function webhookUrlRefused(url: string, error: LoyaltyError): CliError | undefined {
  const messages = error.status === 422 ? error.fields?.url : undefined;
  if (!messages?.length) return undefined;
  const reason = messages.join(' ').replace(/^The url /, 'it ');
  const id = typeof error.requestId === 'string' ? error.requestId : undefined;
  const local = /https|public/i.test(reason);
  return new CliError(`The server refused the webhook URL ${url}: ${reason}${requestIdSuffix(id)}`, {
    hint: local ? LOCAL_RECEIVER_HINT : 'Give an https:// URL on a public host, without a user name or password.',
    cause: error,
  });
}

/** `call()` for a request that sends a webhook URL: its refusal is explained as above. */
export async function callWithUrl<R extends ApiResult>(
  ctx: Context,
  url: string | undefined,
  send: Send<R>,
): Promise<DataOf<R>> {
  const result = await request(ctx, send);
  const error = toLoyaltyError(result);
  const refused = error && url !== undefined ? webhookUrlRefused(url, error) : undefined;
  if (refused) throw refused;
  return dataOf(ctx, result);
}
