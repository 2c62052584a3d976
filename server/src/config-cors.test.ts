import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.js';

// Issue 29: LOYALTY_CORS_ORIGINS is checked at start, with an error naming the variable and the entry.

describe('LOYALTY_CORS_ORIGINS', () => {
  it('is closed when unset or empty', () => {
    expect(loadConfig({}).cors).toEqual({ origins: [], anyOrigin: false });
    expect(loadConfig({ LOYALTY_CORS_ORIGINS: '' }).cors).toEqual({ origins: [], anyOrigin: false });
  });

  it('takes a comma list of exact origins, and * for the routes without credentials', () => {
    expect(loadConfig({ LOYALTY_CORS_ORIGINS: 'https://backoffice.example, http://localhost:5173,*' }).cors).toEqual({
      origins: ['https://backoffice.example', 'http://localhost:5173'],
      anyOrigin: true,
    });
    expect(loadConfig({ LOYALTY_CORS_ORIGINS: '*' }).cors).toEqual({ origins: [], anyOrigin: true });
  });

  it.each([
    [
      'https://backoffice.example/',
      /"https:\/\/backoffice.example\/" is not an exact origin.*did you mean https:\/\/backoffice.example\?/,
    ],
    ['https://backoffice.example/admin', /not an exact origin/],
    ['https://*.example.com', /no wildcard/],
    ['HTTPS://Backoffice.example', /did you mean https:\/\/backoffice.example\?/],
    ['backoffice.example', /"backoffice.example" is not an exact origin/],
    ['ftp://files.example', /not an exact origin/],
    ['null', /"null" is not an exact origin/],
  ])('stops the start on %s, naming the variable', (value, message) => {
    expect(() => loadConfig({ LOYALTY_CORS_ORIGINS: value })).toThrow(ConfigError);
    expect(() => loadConfig({ LOYALTY_CORS_ORIGINS: value })).toThrow(/LOYALTY_CORS_ORIGINS: /);
    expect(() => loadConfig({ LOYALTY_CORS_ORIGINS: value })).toThrow(message);
  });
});
