import { describe, expect, it } from 'vitest';
import { ConfigError, demoFixturesPath, loadConfig } from './config.js';

describe('loadConfig', () => {
  it('gives the documented defaults (the environment table of README.md) for an empty environment', () => {
    expect(loadConfig({})).toMatchObject({
      port: 3000,
      host: '127.0.0.1',
      databaseUrl: undefined,
      dataDir: '.loyalty/data',
      fixtures: demoFixturesPath,
      worker: true,
      webhookAllowInsecure: false,
      webhookRetryDelays: [30, 60, 600, 3600, 10800, 21600, 86400],
      webhookTimeoutMs: 5000,
      webhookDisableAfterSeconds: 432_000,
      webhookDisableAfterFailures: 100,
      rateLimitToken: 600,
      rateLimitIp: 60,
      rateLimitWindowSeconds: 60,
      publicUrl: undefined,
    });
  });

  it('LOYALTY_SANDBOX: on by default with the embedded database, off with DATABASE_URL, 1/0 override, anything else refused', () => {
    const db = { DATABASE_URL: 'postgres://loyalty@db.example.com/loyalty', LOYALTY_SECRET_KEY: 'k' };
    expect(loadConfig({}).sandbox).toBe(true);
    expect(loadConfig(db).sandbox).toBe(false);
    expect(loadConfig({ ...db, LOYALTY_SANDBOX: '1' }).sandbox).toBe(true);
    expect(loadConfig({ LOYALTY_SANDBOX: '0' }).sandbox).toBe(false);
    expect(loadConfig({ LOYALTY_SANDBOX: '' }).sandbox).toBe(true);
    expect(() => loadConfig({ LOYALTY_SANDBOX: 'yes' })).toThrow(/LOYALTY_SANDBOX must be 1 \(on\) or 0 \(off\)/);
  });

  it('takes the rate limit per token (LOYALTY_RATE_LIMIT_TOKEN only) and the stream slots per client', () => {
    expect(loadConfig({ LOYALTY_RATE_LIMIT_TOKEN: '40' }).rateLimitToken).toBe(40);
    expect(loadConfig({}).rateLimitToken).toBe(600);
    expect(() => loadConfig({ LOYALTY_RATE_LIMIT_TOKEN: '0' })).toThrow(/LOYALTY_RATE_LIMIT_TOKEN/);
    // The per-client name was never released: the rate limit is counted per token, as the API specification says.
    expect(loadConfig({ LOYALTY_RATE_LIMIT_CLIENT: '50', LOYALTY_RATE_LIMIT_TOKEN: '40' }).rateLimitToken).toBe(40);
    expect(loadConfig({ LOYALTY_RATE_LIMIT_CLIENT: '50' }).rateLimitToken).toBe(600);
    expect(loadConfig({ LOYALTY_STREAMS_PER_CLIENT: '3' }).streamsPerToken).toBe(3);
    expect(loadConfig({ LOYALTY_STREAMS_PER_TOKEN: '4' }).streamsPerToken).toBe(4);
    expect(loadConfig({ LOYALTY_STREAMS_PER_CLIENT: '3', LOYALTY_STREAMS_PER_TOKEN: '4' }).streamsPerToken).toBe(3);
    expect(loadConfig({}).streamsPerToken).toBe(2);
  });

  it('LOYALTY_WEBHOOK_FAILING_AFTER: a tenth of the disable threshold by default, refused unless below it', () => {
    expect(loadConfig({}).webhookFailingAfter).toBe(10);
    expect(loadConfig({ LOYALTY_WEBHOOK_DISABLE_AFTER_FAILURES: '25' }).webhookFailingAfter).toBe(3);
    expect(loadConfig({ LOYALTY_WEBHOOK_DISABLE_AFTER_FAILURES: '3' }).webhookFailingAfter).toBe(1);
    expect(loadConfig({ LOYALTY_WEBHOOK_DISABLE_AFTER_FAILURES: '1' }).webhookFailingAfter).toBe(0);
    expect(loadConfig({ LOYALTY_WEBHOOK_DISABLE_AFTER_FAILURES: '0' }).webhookFailingAfter).toBe(10);
    expect(loadConfig({ LOYALTY_WEBHOOK_FAILING_AFTER: '50' }).webhookFailingAfter).toBe(50);
    expect(loadConfig({ LOYALTY_WEBHOOK_FAILING_AFTER: '0' }).webhookFailingAfter).toBe(0);
    expect(
      loadConfig({ LOYALTY_WEBHOOK_FAILING_AFTER: '500', LOYALTY_WEBHOOK_DISABLE_AFTER_FAILURES: '0' })
        .webhookFailingAfter,
    ).toBe(500);
    expect(() => loadConfig({ LOYALTY_WEBHOOK_FAILING_AFTER: '100' })).toThrow(
      'LOYALTY_WEBHOOK_FAILING_AFTER (100) must be below LOYALTY_WEBHOOK_DISABLE_AFTER_FAILURES (100)',
    );
    expect(() => loadConfig({ LOYALTY_WEBHOOK_FAILING_AFTER: '-1' })).toThrow(/LOYALTY_WEBHOOK_FAILING_AFTER/);
    expect(() => loadConfig({ LOYALTY_WEBHOOK_FAILING_AFTER: 'ten' })).toThrow(/LOYALTY_WEBHOOK_FAILING_AFTER/);
  });

  it('reads the public URL without a trailing slash', () => {
    expect(loadConfig({ LOYALTY_PUBLIC_URL: 'https://sandbox.example.com/' }).publicUrl).toBe(
      'https://sandbox.example.com',
    );
  });

  it('requires LOYALTY_SECRET_KEY with DATABASE_URL, and names it', () => {
    const attempt = () => loadConfig({ DATABASE_URL: 'postgres://loyalty@db.example.com/loyalty' });
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(/LOYALTY_SECRET_KEY is required with DATABASE_URL/);
    expect(
      loadConfig({
        DATABASE_URL: 'postgres://loyalty@db.example.com/loyalty',
        LOYALTY_SECRET_KEY: 'k',
        LOYALTY_SECRET_KEY_PREVIOUS: 'j',
      }),
    ).toMatchObject({ secretKey: 'k', secretKeyPrevious: 'j' });
    // The embedded database generates one into its data directory.
    expect(loadConfig({ DATABASE_URL: '' })).toMatchObject({ secretKey: undefined, secretKeyPrevious: undefined });
  });

  it('starts on any HOST without LOYALTY_METRICS_TOKEN: HOST is only the bind address', () => {
    // Off loopback without the token /metrics is off (plugins/metrics.ts), the start goes on.
    for (const HOST of ['0.0.0.0', '::', '10.0.0.5', 'sandbox.example.com', '127.0.0.1', 'localhost'])
      expect(loadConfig({ HOST }), HOST).toMatchObject({ host: HOST, metricsToken: undefined });
    const token = { LOYALTY_METRICS_TOKEN: 'metrics-token-0123456789' };
    expect(loadConfig({ HOST: '0.0.0.0', ...token }).metricsToken).toBe(token.LOYALTY_METRICS_TOKEN);
    expect(loadConfig({ HOST: '0.0.0.0', LOYALTY_METRICS_TOKEN: '' }).metricsToken).toBeUndefined(); // empty: unset
    expect(() => loadConfig({ HOST: '0.0.0.0', LOYALTY_METRICS_TOKEN: 'short' })).toThrow(
      /LOYALTY_METRICS_TOKEN must be at least 16 characters/,
    );
  });

  it('caches the database gauges of /metrics for LOYALTY_METRICS_CACHE_SECONDS (default 10)', () => {
    expect(loadConfig({}).metricsCacheSeconds).toBe(10);
    expect(loadConfig({ LOYALTY_METRICS_CACHE_SECONDS: '5' }).metricsCacheSeconds).toBe(5);
    expect(() => loadConfig({ LOYALTY_METRICS_CACHE_SECONDS: '-1' })).toThrow(/LOYALTY_METRICS_CACHE_SECONDS/);
  });

  it('stops at start-up with a message naming each wrong variable', () => {
    const attempt = () =>
      loadConfig({ PORT: 'eighty', LOYALTY_PUBLIC_URL: 'ftp://x', LOYALTY_WEBHOOK_RETRY_DELAYS: '1,2' });
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(/PORT.*LOYALTY_PUBLIC_URL.*LOYALTY_WEBHOOK_RETRY_DELAYS/s);
  });
});
