import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { deref, loadOpenApi } from './openapi.js';
import { BLOCKED_PORT_GROUPS, BLOCKED_PORTS, isAllowedWebhookPort, portOf } from './webhook-ports.js';

const strict = { allowInsecure: false };
const dev = { allowInsecure: true };

describe('isAllowedWebhookPort', () => {
  it('allows 443 and unlisted ports from 1024 up', () => {
    for (const port of [443, 1024, 3000, 8080, 8443, 9443, 65535])
      expect(isAllowedWebhookPort(port, strict), String(port)).toBe(true);
  });

  it('refuses 0, the ports below 1024 but 443, and every listed port', () => {
    for (const port of [0, 1, 22, 25, 80, 110, 442, 444, 1023, 65536, ...BLOCKED_PORTS])
      expect(isAllowedWebhookPort(port, strict), String(port)).toBe(false);
  });

  it('allows 80 too in development mode, and nothing else more', () => {
    expect(isAllowedWebhookPort(80, dev)).toBe(true);
    for (const port of [0, 22, 6379, 5432]) expect(isAllowedWebhookPort(port, dev), String(port)).toBe(false);
  });

  it('lists only ports from 1024 up, each once', () => {
    const all = BLOCKED_PORT_GROUPS.flatMap((g) => g.ports);
    expect(all.filter((p) => p < 1024 || p > 65535)).toEqual([]);
    expect(new Set(all).size).toBe(all.length);
  });

  it('reads the default port of the scheme', () => {
    expect(portOf(new URL('https://a.example/'))).toBe(443);
    expect(portOf(new URL('http://a.example/'))).toBe(80);
    expect(portOf(new URL('https://a.example:6379/'))).toBe(6379);
  });
});

describe('the documented list', () => {
  const numbersIn = (text: string) => new Set([...text.matchAll(/\b\d{4,5}\b/g)].map((m) => Number(m[0])));

  it('openapi.yaml names every refused port in the description of the subscription url', () => {
    const { document } = loadOpenApi();
    const request = deref<{ properties: { url: { description: string } } }>(document, {
      $ref: '#/components/schemas/CreateWebhookSubscriptionRequest',
    });
    const documented = numbersIn(request.properties.url.description);
    expect([...BLOCKED_PORTS].filter((p) => !documented.has(p))).toEqual([]);
    expect([...documented].filter((p) => p > 1024 && !BLOCKED_PORTS.has(p))).toEqual([]);
  });

  it('docs/server.md names every refused port in its webhook URL section', () => {
    const readme = readFileSync(new URL('../../../docs/server.md', import.meta.url), 'utf8');
    const section = readme.split(/^## Webhook URLs$/m)[1]?.split(/^#{2,3} /m)[0] ?? '';
    expect(section, 'docs/server.md has a "## Webhook URLs" section').not.toBe('');
    const documented = numbersIn(section);
    expect([...BLOCKED_PORTS].filter((p) => !documented.has(p))).toEqual([]);
  });
});
