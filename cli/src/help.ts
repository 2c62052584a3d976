// Examples at the end of every command's --help, in one format.

export function examples(...lines: Array<[command: string, what: string]>): string {
  const body = lines.map(([command, what]) => `  # ${what}\n  $ ${command}`).join('\n\n');
  return `\nExamples:\n${body}\n`;
}

/**
 * 1234567 → "1,234,567", as `toLocaleString('en-US')` writes it, without loading ICU's number
 * formatting: that took 12 ms of `loyalty --help`'s start-up (issue 17).
 */
export function thousands(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/**
 * What bounds a long list command and how to go faster within the rules: the API's per-token
 * rate limit (api-spec: 600 requests a minute per token) with `perRequest` items a request.
 */
export function speedHelp(what: string, perRequest = 2000): string {
  const perMinute = thousands(600 * perRequest);
  return (
    `\nHow fast: the API allows 600 requests a minute per token and ${thousands(perRequest)} ${what} a request, so one token\n` +
    `moves at most ${perMinute} ${what} a minute. The CLI paces itself to that limit (no 429s) and the progress says\n` +
    'when it is waiting for the limit rather than for the server. To go faster within the rules: keep the full\n' +
    `${thousands(perRequest)} per request; 2-4 requests in flight help only while the server, not the limit, is the bound; and split a\n` +
    'very large list between API clients, whose tokens each have their own limit. Memory stays flat at any length:\nthe input is read as it is sent.\n'
  );
}
