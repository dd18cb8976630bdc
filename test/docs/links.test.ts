/**
 * The docs link to each other by heading (rest.md#pagination): every relative link of the
 * README and docs/ must name a file that exists and, after `#`, a heading of that file, so a
 * renamed or removed heading cannot leave a dead link behind.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

/** dist/test/docs/ is three levels below the repository. */
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

const pages = [
  'README.md',
  'demo/README.md',
  ...readdirSync(path.join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** The anchors GitHub makes of a page's headings: lower case, punctuation dropped, spaces as '-'. */
function anchorsOf(file: string): Set<string> {
  const anchors = new Set<string>();
  let fenced = false;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6} (.+)$/.exec(line);
    if (!heading) continue;
    const base = heading[1]!
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}_\- ]/gu, '')
      .replace(/ /g, '-');
    let anchor = base;
    for (let n = 1; anchors.has(anchor); n++) anchor = `${base}-${n}`;
    anchors.add(anchor);
  }
  return anchors;
}

/** Relative links outside code: [text](target) with an optional #anchor. */
function linksOf(text: string): Array<{ target: string; anchor: string | null }> {
  const prose = text.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  const links: Array<{ target: string; anchor: string | null }> = [];
  for (const match of prose.matchAll(/\]\(([^)\s#]*)(?:#([^)\s]+))?\)/g)) {
    const target = match[1] ?? '';
    if (/^[a-z]+:/i.test(target)) continue; // http:, https:, mailto:
    links.push({ target, anchor: match[2] ?? null });
  }
  return links;
}

test('every relative link of the README and docs/ names an existing file and heading', () => {
  let checked = 0;
  const dead: string[] = [];
  for (const page of pages) {
    const file = path.join(root, page);
    for (const { target, anchor } of linksOf(readFileSync(file, 'utf8'))) {
      const linked = target === '' ? file : path.resolve(path.dirname(file), target);
      checked++;
      if (!existsSync(linked)) dead.push(`${page}: ${target} does not exist`);
      else if (anchor !== null && linked.endsWith('.md') && !anchorsOf(linked).has(anchor)) {
        dead.push(`${page}: ${target}#${anchor} names no heading`);
      }
    }
  }
  assert.ok(checked > 100, `only ${checked} links found: the link pattern no longer matches the docs`);
  assert.deepEqual(dead, []);
});
