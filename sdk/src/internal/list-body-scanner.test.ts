import { describe, expect, it } from 'vitest';
import { ListBodyScanner, ListBodySyntaxError } from './list-body-scanner.js';

/** Items that put every character the scanner looks at inside strings, keys and nested values. */
const tricky = [
  { email: 'a@example.com', full_name: 'Plain', unsubscribed: 0, city: null },
  { email: 'one@example.com', full_name: 'one "} quote, then ] and {' },
  { email: 'q"uote@example.com', full_name: 'He said "}]," and left', street: '\\', house_number: '\\"' },
  { email: 'b@example.com', full_name: 'ends in a backslash \\\\', note: '{"members":[1,2]}' },
  { email: 'u@example.com', full_name: 'Zoë Ødegård 名前 🎉', city: '\u2028\u2029\t\n', country: '\u0000' },
  { email: 'n@example.com', nested: { list: [{ a: [] }, [], {}], 'key "with" quotes': '[' }, n: -1.5e3, t: true },
];

/** The envelope around them, with what the scanner must skip: "members" as a value and in other objects. */
const body = (items: unknown[], ws = '') =>
  `{"message":"members:[ is not a list",${ws}"meta":{"members":["x"]},"data":{"total":${items.length},` +
  `"next_page_url":null,"members"${ws}:${ws}[${ws}${items.map((x) => JSON.stringify(x)).join(`${ws},${ws}`)}${ws}]${ws},"after":"]}}"}${ws}}${ws}`;

/** Feeds `bytes` in the given pieces (decoded as the SDK decodes them) and returns items and envelope. */
function run(bytes: Uint8Array, cuts: number[]) {
  const scanner = new ListBodyScanner(['data', 'members']);
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const items: unknown[] = [];
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    items.push(...scanner.push(decoder.decode(bytes.subarray(from, cut), { stream: true })));
    from = cut;
  }
  items.push(...scanner.push(decoder.decode()));
  return { items, envelope: scanner.end(), head: scanner.envelopeHead() };
}

describe('ListBodyScanner', () => {
  const text = body(tricky, ' \n');
  const bytes = new TextEncoder().encode(text);
  const whole = JSON.parse(text) as { data: { members: unknown[] } };

  it('yields every item and the envelope for a body split in two at every byte', () => {
    for (let cut = 0; cut <= bytes.length; cut++) {
      const { items, envelope } = run(bytes, [cut]);
      expect(items, `split at byte ${cut}`).toEqual(whole.data.members);
      expect(envelope).toEqual({ ...whole, data: { ...whole.data, members: [] } });
    }
  });

  it('yields every item for a body in pieces of 1 to 7 bytes', () => {
    for (let size = 1; size <= 7; size++) {
      const cuts = [];
      for (let at = size; at < bytes.length; at += size) cuts.push(at);
      expect(run(bytes, cuts).items, `pieces of ${size}`).toEqual(whole.data.members);
    }
  });

  it('reads the envelope head (total) as soon as the list begins', () => {
    const scanner = new ListBodyScanner(['data', 'members']);
    const start = text.indexOf('[', text.indexOf('"members" \n:'));
    scanner.push(text.slice(0, start - 1));
    expect(scanner.envelopeHead()).toBeUndefined();
    expect(scanner.push(text.slice(start - 1, start + 1))).toEqual([]);
    expect(scanner.envelopeHead()).toMatchObject({ data: { total: tricky.length, members: [] } });
  });

  it('takes an empty list and a compact body', () => {
    expect(run(new TextEncoder().encode(body([])), []).items).toEqual([]);
    const compact = new TextEncoder().encode(body(tricky));
    expect(run(compact, [1, 40, 41, 200]).items).toEqual(tricky);
  });

  it('says the body was cut short when it ends anywhere before the end of the envelope', () => {
    const end = text.trimEnd().length;
    for (let cut = 0; cut < end; cut++) {
      const scanner = new ListBodyScanner(['data', 'members']);
      scanner.push(text.slice(0, cut));
      let thrown: unknown;
      try {
        scanner.end();
      } catch (error) {
        thrown = error;
      }
      expect(thrown, `cut at ${cut}`).toBeInstanceOf(ListBodySyntaxError);
      expect((thrown as ListBodySyntaxError).truncated, `cut at ${cut}`).toBe(true);
    }
  });

  it.each([
    ['an item that is not JSON', '{"data":{"members":[{"a":1,}]}}', /not valid JSON/],
    ['items without a comma', '{"data":{"members":[{"a":1} {"a":2}]}}', /expected "," or "]"/],
    ['two commas', '{"data":{"members":[{"a":1},,{"a":2}]}}', /expected a list item/],
    ['an item that is not an object', '{"data":{"members":[1]}}', /expected a list item/],
    ['no list', '{"message":"x","data":{"members":3}}', /no "data.members" list/],
    ['a list somewhere else', '{"members":[{"a":1}]}', /no "data.members" list/],
    ['not an object', '[{"a":1}]', /no "data.members" list|not a JSON object/],
    ['text', 'Bad Gateway', /not a JSON object/],
    ['a JSON string', '"members"', /not a JSON object/],
    ['a bad escape in a key', '{"da\\x":{"members":[]}}', /a key of the envelope is not valid JSON/],
    ['a broken head', '{"data":{"total" 1,"members":[]}}', /the envelope before the list is not valid JSON/],
    ['garbage after the list', '{"data":{"members":[]}}}x', /after the list is not valid JSON/],
  ])('rejects %s', (_, input, message) => {
    // As the SDK reads a body: push, the head once the list began, then the end.
    const attempt = () => {
      const scanner = new ListBodyScanner(['data', 'members']);
      scanner.push(input);
      scanner.envelopeHead();
      scanner.end();
    };
    expect(attempt).toThrow(message);
    try {
      attempt();
    } catch (error) {
      expect((error as ListBodySyntaxError).truncated).toBe(false);
    }
  });
});
