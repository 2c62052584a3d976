import type { Context } from '../../context.js';
import { call } from '../common/api.js';

/** `events resend`: one event queued for one subscription now (POST /events/{id}/resend). */
export async function resendEvent(ctx: Context, eventId: string, options: { subscription: string }): Promise<void> {
  const { data } = await call(ctx, (api, signal) =>
    api.POST('/events/{id}/resend', {
      params: { path: { id: eventId } },
      body: { subscription_id: options.subscription },
      signal,
    }),
  );
  ctx.output.success(
    `Event ${data.event_id} (${data.event_type}) queued for subscription ${options.subscription} (delivery ${data.id}).`,
  );
  if (ctx.output.json) ctx.output.result(data, () => '');
}
