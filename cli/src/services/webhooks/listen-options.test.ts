import { describe, expect, it } from 'vitest';
import { CliError, ExitCode } from '../../errors.js';
import { destinationOf, forwardPlan, parseForwards, parseHeaders, parseRetries } from './listen-options.js';

/** The usage error `run` throws, for its message and hint. */
function usage(run: () => unknown): CliError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(CliError);
    expect((error as CliError).exitCode).toBe(ExitCode.usage);
    return error as CliError;
  }
  throw new Error('expected a usage error');
}

describe('parseForwards', () => {
  it('maps each type to its URL', () => {
    const byType = parseForwards(
      ['coupon.issued=http://127.0.0.1:4242/coupons', ' member.created = https://localhost/members '],
      [],
    );
    expect([...byType]).toEqual([
      ['coupon.issued', 'http://127.0.0.1:4242/coupons'],
      ['member.created', 'https://localhost/members'],
    ]);
  });

  it('names --forward and the closest type for an unknown one', () => {
    const error = usage(() => parseForwards(['coupon.isued=http://localhost/c'], []));
    expect(error.message).toBe('--forward: unknown event type "coupon.isued". Did you mean coupon.issued?');
    expect(error.hint).toContain('member.created');
  });

  it.each([
    ['coupon.issued', '--forward takes <event-type>=<url> (got "coupon.issued").'],
    ['=http://localhost/c', '--forward takes <event-type>=<url> (got "=http://localhost/c").'],
    ['coupon.issued=localhost:4242', '--forward coupon.issued must be an http(s) URL (got "localhost:4242").'],
    ['coupon.issued=ftp://localhost/x', '--forward coupon.issued must be an http(s) URL (got "ftp://localhost/x").'],
    ['coupon.issued,member.created=http://localhost/x', '--forward takes one event type per flag'],
  ])('refuses %s', (value, message) => {
    expect(usage(() => parseForwards([value], [])).message).toContain(message);
  });

  it('refuses a type given twice, and a type that --events leaves out', () => {
    expect(
      usage(() => parseForwards(['coupon.issued=http://localhost/a', 'coupon.issued=http://localhost/b'], [])).message,
    ).toBe('--forward coupon.issued is given twice; give each type one URL.');
    expect(usage(() => parseForwards(['coupon.issued=http://localhost/a'], ['member.created'])).message).toBe(
      '--forward coupon.issued would never be used: --events does not include coupon.issued.',
    );
  });
});

describe('parseHeaders', () => {
  it('takes repeated flags and Stripe-style comma lists; a comma inside a value stays', () => {
    expect(parseHeaders(['X-Env: dev', 'X-Team:loyalty, Accept: a/b, c/d', 'x-env: staging'])).toEqual({
      'x-env': 'staging',
      'x-team': 'loyalty',
      accept: 'a/b, c/d',
    });
  });

  it.each(['Loyalty-Signature', 'webhook-signature', 'Webhook-Id', 'webhook-timestamp', 'Loyalty-Attempt'])(
    'refuses to override the signed header %s',
    (name) => {
      expect(usage(() => parseHeaders([`X-A: 1, ${name}: forged`])).message).toBe(
        `--headers cannot set ${name}: every forward is signed, and that header is part of it.`,
      );
    },
  );

  it('refuses malformed headers and transport headers', () => {
    expect(usage(() => parseHeaders(['no colon'])).message).toBe('--headers takes "Name: value" (got "no colon").');
    expect(usage(() => parseHeaders(['Bad Name: x'])).message).toContain('--headers takes "Name: value"');
    expect(usage(() => parseHeaders(['Host: evil'])).message).toBe(
      '--headers cannot set Host: it describes the request itself.',
    );
  });
});

describe('parseRetries', () => {
  it('takes 0 to 20', () => {
    expect([parseRetries('0'), parseRetries('5'), parseRetries('20')]).toEqual([0, 5, 20]);
    for (const bad of ['-1', '21', '2.5', 'many', ''])
      expect(usage(() => parseRetries(bad)).message).toContain('--forward-retries must be a whole number from 0 to 20');
  });
});

describe('forwardPlan', () => {
  const base = { forward: [], headers: [], forwardRetries: '5', events: [] };

  it('sends a type with its own --forward there and everything else to --forward-to', () => {
    const plan = forwardPlan({
      ...base,
      forward: ['coupon.issued=http://localhost/coupons'],
      forwardTo: 'http://localhost/all',
    });
    expect(destinationOf(plan, 'coupon.issued')).toBe('http://localhost/coupons');
    expect(destinationOf(plan, 'member.created')).toBe('http://localhost/all');
    const only = forwardPlan({ ...base, forward: ['coupon.issued=http://localhost/coupons'] });
    expect(destinationOf(only, 'member.created')).toBeUndefined();
  });

  it('refuses --headers when nothing is forwarded, and a bad --forward-to', () => {
    expect(usage(() => forwardPlan({ ...base, headers: ['X-A: 1'] })).message).toBe(
      '--headers applies to forwarded events: add --forward-to or --forward.',
    );
    expect(usage(() => forwardPlan({ ...base, forwardTo: 'localhost' })).message).toBe(
      '--forward-to must be an http(s) URL (got "localhost").',
    );
  });
});
