// The code blocks and links of the README and docs/, read with marked's lexer, for the docs test.
// A block's info string is its language and attributes: ```sh exit=3, ```ts fragment,
// ```sh skip="why it cannot run". See docs/development.md ("The docs are tested").
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { marked, type Token, type Tokens } from 'marked';

export type DocBlock = {
  file: string;
  line: number;
  lang: string;
  attrs: Record<string, string | true>;
  code: string;
};

export type DocLink = { file: string; line: number; href: string };

/** README.md and every Markdown page of docs/, relative to the repository root. */
export const docFiles = (root: string): string[] => [
  'README.md',
  ...readdirSync(path.join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
];

/** `sh exit=3 skip="a reason"` → lang `sh`, attrs { exit: '3', skip: 'a reason' }. */
export function parseInfo(info: string): Pick<DocBlock, 'lang' | 'attrs'> {
  const [lang = '', ...rest] = info.trim().match(/[^\s"=]+(?:="[^"]*"|=[^\s"]+)?/g) ?? [];
  const attrs: Record<string, string | true> = {};
  for (const part of rest) {
    const eq = part.indexOf('=');
    if (eq < 0) attrs[part] = true;
    else attrs[part.slice(0, eq)] = part.slice(eq + 1).replace(/^"|"$/g, '');
  }
  return { lang, attrs };
}

function walk(tokens: Token[], visit: (token: Token) => void): void {
  for (const token of tokens) {
    visit(token);
    const t = token as Token & { tokens?: Token[]; items?: Token[] };
    if (t.items) walk(t.items, visit);
    if (t.tokens) walk(t.tokens, visit);
    if (token.type === 'table') {
      const table = token as Tokens.Table;
      for (const cell of [...table.header, ...table.rows.flat()]) walk(cell.tokens, visit);
    }
  }
}

/** Every code block of a file (fenced or indented), with its line, and every link. */
export function readDoc(root: string, file: string): { blocks: DocBlock[]; links: DocLink[]; headings: string[] } {
  const text = readFileSync(path.join(root, file), 'utf8');
  const blocks: DocBlock[] = [];
  const links: DocLink[] = [];
  const headings: string[] = [];
  const lineOf = (raw: string, from: number): number => text.slice(0, text.indexOf(raw, from)).split('\n').length;
  let cursor = 0;
  walk(marked.lexer(text), (token) => {
    if (token.type === 'code') {
      const code = token as Tokens.Code;
      const at = text.indexOf(code.raw, cursor);
      if (at >= 0) cursor = at + code.raw.length;
      const info = code.codeBlockStyle === 'indented' ? '' : (code.raw.match(/^\s*```+([^\n]*)/)?.[1] ?? '');
      blocks.push({ file, line: lineOf(code.raw, Math.max(0, at)), ...parseInfo(info), code: code.text });
    } else if (token.type === 'link') {
      const href = (token as Tokens.Link).href;
      links.push({ file, line: lineOf(token.raw, 0), href });
    } else if (token.type === 'heading') {
      headings.push(slug((token as Tokens.Heading).text));
    }
  });
  return { blocks, links, headings };
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as dashes. */
export const slug = (heading: string): string =>
  heading
    .replace(/`/g, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
