import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers/process.js';

/**
 * The documentation explains the project on its own: every link inside the repository resolves
 * (file and anchor), the partner API's messages are the ones the server sends, every section and
 * rule the code cites exists, and tables stay readable.
 */

const SKIP = new Set(['node_modules', 'dist', '.git', 'data', 'generated']);

function filesUnder(dir: string, keep: (file: string) => boolean): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = path.join(dir, entry.name);
    if (entry.isDirectory()) return SKIP.has(entry.name) ? [] : filesUnder(relative, keep);
    return keep(entry.name) ? [relative] : [];
  });
}

const MARKDOWN = [
  'README.md',
  ...['docs', 'apps', 'packages', 'examples', 'scripts', 'bench'].flatMap((dir) =>
    filesUnder(dir, (name) => name.endsWith('.md')),
  ),
];
const SOURCES = ['apps', 'packages', 'examples', 'scripts', 'bench'].flatMap((dir) =>
  filesUnder(dir, (name) => /\.(ts|mjs|js)$/.test(name)),
);
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');
/** Markdown without its fenced code blocks, where link-like text is not a link. */
const prose = (text: string) => text.replace(/^```[\s\S]*?^```/gm, '');

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

function anchorsOf(file: string): Set<string> {
  const text = prose(read(file));
  const headings = [...text.matchAll(/^#{1,6} (.+)$/gm)].map((match) => slug(match[1]));
  const ids = [...text.matchAll(/<a id="([^"]+)"><\/a>/g)].map((match) => match[1]);
  return new Set([...headings, ...ids]);
}

describe('the documentation', () => {
  it('has links inside the repository that all resolve, anchors included', () => {
    const broken: string[] = [];
    for (const file of MARKDOWN) {
      for (const [, target] of prose(read(file)).matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target)) continue;
        const [where, anchor] = target.split('#') as [string, string | undefined];
        const resolved = where === '' ? file : path.join(path.dirname(file), where);
        if (!fs.existsSync(path.join(ROOT, resolved))) broken.push(`${file}: ${target}`);
        else if (anchor && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor))
          broken.push(`${file}: ${target} (no such heading)`);
      }
    }
    expect(MARKDOWN.length).toBeGreaterThan(15);
    expect(broken).toEqual([]);
  });

  it('points at nothing outside the repository for the contract or the rules', () => {
    const mentions = [...MARKDOWN, ...SOURCES, 'docs/openapi.json'].filter((file) =>
      /\bspec\//.test(read(file)),
    );
    expect(mentions).toEqual([]);
  });

  it('quotes in the partner API only messages the server sends', () => {
    const guide = read('docs/partner-api.md');
    const errors = guide.slice(guide.indexOf('## 7. Errors'), guide.indexOf('## 8. Limits'));
    const messages = [...errors.matchAll(/^\| \d{3} +\|.*\| `([^`]+)` +\|$/gm)].map((match) => match[1]);
    expect(messages.length).toBeGreaterThan(20);
    const source = SOURCES.filter((file) => file.startsWith('apps/server/src/'))
      .map(read)
      .join('\n');
    // `<id>` stands for any value, and a number may come from a constant (`${MAX_LIMIT}`).
    const pattern = (message: string) =>
      new RegExp(
        message
          .split(/(<[a-z]+>|\d+)/)
          .map((part, i) =>
            i % 2 === 0
              ? part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
              : part.startsWith('<')
                ? '.*?'
                : `(?:${part}|\\$\\{\\w+\\})`,
          )
          .join(''),
      );
    const missing = messages.filter((message) => !pattern(message).test(source));
    expect(missing).toEqual([]);
  });

  it('has every section of the partner API and every rule that the code cites', () => {
    const guide = read('docs/partner-api.md');
    const rules = anchorsOf('docs/product-rules.md');
    const missing: string[] = [];
    for (const file of [...SOURCES, 'docs/openapi.json']) {
      const text = read(file);
      for (const [, section, item] of text.matchAll(/partner API (?:section )?(\d+)(?:\.(\d+))?/g)) {
        const heading = new RegExp(`^#{2,3} ${section}\\.${item ? `${item} ` : ' '}`, 'm');
        const body = guide.split(/^## /m).find((part) => part.startsWith(`${section}. `)) ?? '';
        const listed = item !== undefined && new RegExp(`^${item}\\. `, 'm').test(body);
        if (!heading.test(guide) && !listed) missing.push(`${file}: partner API ${section}.${item ?? ''}`);
      }
      for (const [, rule] of text.matchAll(/\bD(\d{1,2})\b/g))
        if (!rules.has(`d${rule}`)) missing.push(`${file}: D${rule}`);
    }
    expect(missing).toEqual([]);
  });

  it('keeps every table cell to a short sentence', () => {
    const long: string[] = [];
    for (const file of MARKDOWN)
      prose(read(file))
        .split('\n')
        .filter((line) => line.startsWith('|') && !/^[|\s:-]+$/.test(line))
        .forEach((line) => {
          for (const cell of line.slice(1, -1).split(' | '))
            if (cell.trim().length > 130) long.push(`${file}: ${cell.trim().slice(0, 60)}…`);
        });
    expect(long).toEqual([]);
  });
});
