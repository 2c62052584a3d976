import { describe, expect, it } from 'vitest';
import { isText, textFaults } from './input-rules.js';

describe('strings are text', () => {
  it('refuses NUL and unpaired surrogates, keeps pairs and everything else', () => {
    for (const bad of ['\u0000', 'a\u0000', '\ud800', 'a\ud800b', '\udc00', 'x\udc00\ud800', '\ud83d'])
      expect(isText(bad), JSON.stringify(bad)).toBe(false);
    for (const good of ['', 'plain', 'Zoë', '😀', 'a😀b', '\u0001\u001f', '\ufffd', '日本'])
      expect(isText(good), good).toBe(true);
  });

  it('names every field that is not text, at any depth, and the object of a bad property name', () => {
    expect(
      textFaults({ a: 'ok', b: 'x\u0000', list: ['ok', { c: '\ud800' }], n: 5, nil: null, nested: { 'k\u0000': 1 } }),
    ).toEqual({
      b: [expect.stringContaining('The b field')],
      'list.1.c': [expect.stringContaining('The list.1.c field')],
      nested: [expect.stringContaining('property name in the nested field')],
    });
    expect(textFaults('\u0000')).toHaveProperty('body');
    expect(textFaults({ a: ['x', 'y'], b: { c: 'Zoë 😀' } })).toEqual({});
  });

  it('walks a deeply nested body without overflowing the stack', () => {
    let deep: unknown = '\u0000';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(Object.keys(textFaults(deep))).toHaveLength(1);
  });
});
