/**
 * "Strings are text" (openapi.yaml, Input rules): no string a request carries may hold U+0000 or an
 * unpaired UTF-16 surrogate. PostgreSQL rejects NUL in text and lone surrogates in json, so without
 * this rule such a value would answer 500 wherever it reached the database.
 *
 * The rule holds for every string of the request, not only the ones a schema declares: fields a
 * schema leaves open (extra properties of a shipping address, say) and property names are stored
 * too. So it is checked on the data itself, beside the schema, by the shared request validation.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the rule's purpose is to find U+0000 in request strings
const NOT_TEXT = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export const isText = (value: string) => !NOT_TEXT.test(value);

/**
 * The fields of `value` (dotted paths, as validation errors name them) whose string, or one of
 * whose property names, is not text. Iterative: a deeply nested body cannot overflow the stack.
 */
export function textFaults(value: unknown): Record<string, string[]> {
  const faults: Record<string, string[]> = {};
  const stack: { node: unknown; path: string }[] = [{ node: value, path: '' }];
  const add = (field: string, message: string) => {
    const name = field || 'body';
    let messages = faults[name];
    if (!messages) {
      messages = [];
      faults[name] = messages;
    }
    messages.push(message.replace('{field}', name));
  };
  for (let entry = stack.pop(); entry !== undefined; entry = stack.pop()) {
    const { node, path } = entry;
    if (typeof node === 'string') {
      if (!isText(node)) add(path, 'The {field} field must not contain NUL characters or unpaired surrogates.');
    } else if (Array.isArray(node)) {
      for (const [i, item] of node.entries()) stack.push({ node: item, path: path ? `${path}.${i}` : String(i) });
    } else if (node && typeof node === 'object') {
      for (const [key, item] of Object.entries(node)) {
        if (!isText(key)) {
          add(path, 'A property name in the {field} field contains NUL characters or unpaired surrogates.');
          continue;
        }
        stack.push({ node: item, path: path ? `${path}.${key}` : key });
      }
    }
  }
  return faults;
}
