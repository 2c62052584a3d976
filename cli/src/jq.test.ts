import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { API, fakeApiServer, loggedInEnv } from '#test-helpers/cli-unit/fake-api.js';
import { runCli, tempConfigHome } from '#test-helpers/cli-unit/run-cli.js';
import { CliError, ExitCode } from './errors.js';
import { loadJqFilter } from './jq.js';
import { Output } from './output.js';

const input = {
  data: [
    { tag: 'vip', points: 120, brand_id: 'brand-acme', labels: ['a', 'b'] },
    { tag: 'new', points: 5, brand_id: 'brand-acme', labels: [] },
    { tag: 'line\nbreak', points: null, brand_id: 'brand-globex', labels: ['c'] },
  ],
  meta: { total: 3, cursor: null },
};

describe('--jq filters like gh --jq (jq -r -c: one result per line, strings raw)', () => {
  it.each([
    ['a path', '.meta.total', '3\n'],
    ['an iterator, strings raw', '.data[].tag', 'vip\nnew\nline\nbreak\n'],
    ['select', '.data[] | select(.points != null and .points > 100) | .tag', 'vip\n'],
    ['map, compact JSON', '.data | map(.points)', '[120,5,null]\n'],
    [
      'objects stay JSON, one per line',
      '.data[] | {tag, n: (.labels | length)}',
      '{"tag":"vip","n":2}\n{"tag":"new","n":0}\n{"tag":"line\\nbreak","n":1}\n',
    ],
    ['string interpolation', '.data[0] | "\\(.tag) has \\(.points) points"', 'vip has 120 points\n'],
    ['a string inside an array stays quoted', '[.data[0].tag]', '["vip"]\n'],
    ['null and booleans as text', '.meta.cursor, (.data | length > 2)', 'null\ntrue\n'],
    ['no result prints nothing', '.data[] | select(.tag == "none")', ''],
    ['an empty string is an empty line', '"", .meta.total', '\n3\n'],
    [
      'group_by and @csv',
      '.data | group_by(.brand_id)[] | [.[0].brand_id, length] | @csv',
      '"brand-acme",2\n"brand-globex",1\n',
    ],
    ['the identity', '.meta', '{"total":3,"cursor":null}\n'],
  ])('%s: %s', async (_what, expression, expected) => {
    const filter = await loadJqFilter(expression);
    expect(filter(input)).toBe(expected);
  });

  it.each([
    ['.foo |||', "--jq: syntax error, unexpected '|' at column 7:\n    .foo |||\n          ^"],
    ['.data[', '--jq: syntax error, unexpected end of file at column 6:\n    .data[\n         ^'],
    ['.data[] | nosuch(1)', '--jq: nosuch/1 is not defined at column 11:\n    .data[] | nosuch(1)\n              ^'],
    [
      '.a\n| .b ) |',
      '--jq: syntax error, unexpected INVALID_CHARACTER, expecting end of file at line 2, column 6:\n    | .b ) |\n         ^',
    ],
  ])('%j is a usage error naming the position', async (expression, message) => {
    const error = await loadJqFilter(expression).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CliError);
    expect((error as CliError).exitCode).toBe(ExitCode.usage);
    expect((error as CliError).message).toBe(message);
    expect((error as CliError).hint).toContain('jq 1.7');
  });

  it('an error while running (keys of a string) is an error of the run (exit 1), not a usage error', async () => {
    const filter = await loadJqFilter('.data[0].tag | keys');
    const error = (() => {
      try {
        return filter(input);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(CliError);
    expect((error as CliError).exitCode).toBe(ExitCode.error);
    expect((error as CliError).message).toBe('--jq: string ("vip") has no keys');
  });

  it('each() gives what filtering the values one by one gives, a trailing comment included', async () => {
    const filter = await loadJqFilter('.data[] | select(.points != null) | .tag # the named ones');
    const values = [input, { data: [] }, input];
    expect(filter.each(values)).toBe(values.map((value) => filter(value)).join(''));
    expect(filter.each([])).toBe('');
  });

  it('leaves process.exitCode as it was (jq-web sets it to jq’s status)', async () => {
    const before = process.exitCode;
    await loadJqFilter('.a |||').catch(() => {});
    expect(process.exitCode).toBe(before);
  });

  it('stays usable over hundreds of calls, failed ones between them (one jq instance per process)', {
    timeout: 30_000,
  }, async () => {
    const filter = await loadJqFilter('.n');
    const failing = await loadJqFilter('.n | keys');
    // jq-wasm, the other WebAssembly build on npm, aborted at the 314th call of one process.
    for (let n = 0; n < 400; n++) {
      if (n % 50 === 0) expect(() => failing({ n })).toThrow(CliError);
      expect(filter({ n })).toBe(`${n}\n`);
    }
  });
});

describe('Output: every JSON value goes through --jq', () => {
  const capture = () => {
    let text = '';
    const write = (chunk: string): boolean => {
      text += chunk;
      return true;
    };
    const stdout = { write } as unknown as NodeJS.WritableStream;
    return { stdout, text: () => text };
  };

  it('--jq implies --json, and result, table and jsonLine are filtered', async () => {
    const out = capture();
    const output = new Output({ stdout: out.stdout, stderr: out.stdout, jq: await loadJqFilter('.tag? // .[].tag') });
    expect(output.json).toBe(true);
    output.table([{ tag: 'a' }, { tag: 'b' }], [{ header: 'tag', value: (row) => row.tag }]);
    output.result({ tag: 'c' }, () => 'human');
    output.jsonLine({ tag: 'd' });
    expect(out.text()).toBe('a\nb\nc\nd\n');
  });
});

const server = fakeApiServer();

describe('loyalty … --jq on the mock API', { timeout: 20_000 }, () => {
  it('a list command prints the filtered tags, one per line', async () => {
    const env = loggedInEnv(await tempConfigHome());
    const result = await runCli(['tags', 'list', '--jq', '.[] | "\\(.tag)\\t\\(.uuid)"'], { env });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^[^\n\t]+\t[0-9a-f-]{36}\n/);
    expect(result.stdout).not.toContain('{');
  });

  it('a bad expression stops before any request, with exit code 2', async () => {
    let requests = 0;
    server.events.on('request:start', () => {
      requests += 1;
    });
    const env = loggedInEnv(await tempConfigHome());
    const result = await runCli(['api', 'POST', '/tags', '-f', 'tag=x', '-f', 'brand_id=brand-acme', '--jq', '.id |'], {
      env,
    });
    server.events.removeAllListeners();
    expect(result.code).toBe(ExitCode.usage);
    expect(result.stderr).toContain('--jq: syntax error, unexpected end of file at column 5');
    expect(result.stdout).toBe('');
    expect(requests).toBe(0);
  });

  it('loyalty api applies the expression to the answer', async () => {
    server.use(
      http.get(`${API}/tags`, () => HttpResponse.json({ success: true, data: [{ tag: 'one' }, { tag: 'two' }] })),
    );
    const env = loggedInEnv(await tempConfigHome());
    const result = await runCli(['api', 'GET', '/tags', '--jq', '.data | map(.tag) | join(",")'], { env });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('one,two\n');
  });
});
