// How `loyalty webhooks listen` shows events and forward outcomes: events on stdout (JSON Lines
// with --json), outcomes on stderr for a person, or on stdout as `{"forward": …}` lines with --json.
import type { Output } from '../../output.js';
import { showControlsKeepingPaint } from '../../ui/controls.js';
import type { FeedEvent, ForwardReport } from './listen-forward.js';
import type { ForwardPlan } from './listen-options.js';

function idsOf(event: FeedEvent): string {
  return Object.entries(event.data)
    .filter(([key]) => key.endsWith('_id') || key === 'points' || key === 'balance' || key === 'type')
    .map(([key, value]) => `${key}=${String(value)}`)
    .join(' ');
}

export function printEvent(output: Output, event: FeedEvent): void {
  if (output.json) output.jsonLine(event);
  else
    output.write(
      showControlsKeepingPaint(
        `${event.created_at}  ${output.out.bold(event.type.padEnd(15))}  ${event.id}  ${output.out.dim(idsOf(event))}`,
      ),
    );
}

/** "to URL", or "coupon.issued to A, everything else to B". */
export function describePlan(plan: ForwardPlan): string {
  if (plan.byType.size === 0) return `to ${plan.catchAll}`;
  const parts = [...plan.byType].map(([type, url]) => `${type} to ${url}`);
  if (plan.catchAll) parts.push(`everything else to ${plan.catchAll}`);
  return parts.join(', ');
}

const seconds = (ms: number): string => `${Math.max(1, Math.round(ms / 1000))} s`;

export function printForward(output: Output, report: ForwardReport, resuming: boolean): void {
  const { event, url, attempt, attempts, outcome, status, error, ms } = report;
  if (output.json) {
    output.jsonLine({
      forward: {
        event_id: event.id,
        event_type: event.type,
        url,
        outcome,
        attempt,
        attempts,
        ...(status !== undefined ? { status } : {}),
        ...(error !== undefined ? { error } : {}),
        ms,
        ...(report.retryInMs !== undefined ? { retry_in_ms: report.retryInMs } : {}),
      },
    });
    return;
  }
  const paint = output.err;
  // Abandoned at Ctrl-C: counted in one line at the end (listen.ts), not one line each.
  if (outcome === 'abandoned') return;
  const where = `POST ${url} [${ms} ms] attempt ${attempt}/${attempts} · ${event.id}`;
  if (outcome === 'delivered') {
    output.info(`  ${paint.green(`→ ${status}`)} ${where}`);
    return;
  }
  const what = status !== undefined ? `${status}` : error;
  const why =
    status === undefined
      ? ' — is the receiver running?'
      : status >= 300 && status < 400
        ? ' — redirects are not followed'
        : '';
  const next =
    outcome === 'retrying'
      ? `; retrying in ${seconds(report.retryInMs ?? 0)}`
      : outcome === 'rejected'
        ? '; final (a 4xx other than 408 and 429 is not retried)'
        : `; gave up after ${attempts} attempt${attempts === 1 ? '' : 's'}${resuming ? ', --resume forwards it again' : ''}`;
  const colour = outcome === 'retrying' ? paint.yellow : paint.red;
  output.info(`  ${colour(`→ ✖ ${what}`)} ${where}${why}${next}`);
}
