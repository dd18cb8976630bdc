/**
 * Whole statements planned once per shape: the text a PostgreSQL source is sent for a statement
 * is kept with a hole where each of the statement's constants goes, so the next statement of
 * the same shape (`WHERE id = 7` after `WHERE id = 3`, or the same text with other `params`) is
 * written by filling the holes, without binding, access checks, planning or deparsing.
 *
 * A template is made by planning the statement a second time with a marker in place of each
 * constant, and is kept only when filling it with the statement's own constants gives exactly
 * the text the ordinary path wrote: the deparser writes a constant the way `constantText` does,
 * and nothing before it depends on a constant's value (the shape, which includes the kinds,
 * is part of the key). Constants that would need escaping are not filled: such a statement
 * takes the ordinary path.
 */
import { randomBytes } from 'node:crypto';
import type { ParseResult } from '@pgsql/types';
import type { HiddenColumns } from '../access/access.js';
import { walk } from '../front/ast.js';
import type { WholePlan } from './whole.js';

export interface WholeTemplate {
  /** The source text around the holes: parts[0] hole parts[1] hole ... */
  parts: string[];
  /** Which constant (in walk order) fills each hole. */
  holes: number[];
  plan: Omit<WholePlan, 'sql'>;
  /** The key of the statement's result columns (engine.ts). */
  columnsKey: string;
  /** What the access checks found, for the errors of the statement (engine.ts). */
  narrowed: boolean;
  hiddenColumns: HiddenColumns;
}

/** A marker no statement contains: random per process. */
const MARKER = `vdb${randomBytes(6).toString('hex')}k`;
const MARKED = new RegExp(`'${MARKER}(\\d+)'`, 'g');

/**
 * The constants of a tree as the deparser writes them, in walk order; null when one cannot be
 * written by filling a hole (a string with a quote or backslash, a bit string).
 */
export function constantTexts(tree: ParseResult): string[] | null {
  const texts: string[] = [];
  let fillable = true;
  walk(tree, (kind, node) => {
    if (kind !== 'A_Const' || node.isnull) return;
    const text = constantText(node as Record<string, unknown>);
    if (text === null) fillable = false;
    else texts.push(text);
  });
  return fillable ? texts : null;
}

function constantText(constant: Record<string, unknown>): string | null {
  const inner = (key: string) => (constant[key] as Record<string, unknown>)[key];
  // Negative numbers take the ordinary path: the deparser may write them in parentheses.
  if ('ival' in constant) return nonNegative(String(inner('ival') ?? 0));
  if ('fval' in constant) return nonNegative(String(inner('fval')));
  if ('boolval' in constant) return inner('boolval') === true ? 'true' : 'false';
  if ('sval' in constant) {
    const text = String(inner('sval') ?? '');
    return /['\\]/.test(text) ? null : `'${text}'`;
  }
  return null;
}

const nonNegative = (number: string) => (number.startsWith('-') ? null : number);

/** A copy of `tree` with each non-null constant replaced by a marked string constant. */
export function markedTree(tree: ParseResult): ParseResult {
  const copy = structuredClone(tree);
  let n = 0;
  walk(copy, (kind, node) => {
    if (kind !== 'A_Const' || node.isnull) return;
    const body = node as Record<string, unknown>;
    for (const key of Object.keys(body)) if (key !== 'location') delete body[key];
    body.sval = { sval: `${MARKER}${n++}` };
  });
  return copy;
}

/** The template of `markedSql`, when filling it with `constants` gives `expectedSql`; else null. */
export function templateOf(
  markedSql: string,
  constants: readonly string[],
  expectedSql: string,
): Pick<WholeTemplate, 'parts' | 'holes'> | null {
  const parts: string[] = [];
  const holes: number[] = [];
  let last = 0;
  for (const match of markedSql.matchAll(MARKED)) {
    const hole = Number(match[1]);
    if (hole >= constants.length) return null;
    parts.push(markedSql.slice(last, match.index));
    holes.push(hole);
    last = match.index + match[0].length;
  }
  parts.push(markedSql.slice(last));
  if (markedSql.includes(MARKER) && holes.length === 0) return null;
  const template = { parts, holes };
  return fill(template, constants) === expectedSql ? template : null;
}

/** The statement text of a template with these constants. */
export function fill(template: Pick<WholeTemplate, 'parts' | 'holes'>, constants: readonly string[]): string {
  let sql = template.parts[0]!;
  for (let i = 0; i < template.holes.length; i++) sql += constants[template.holes[i]!]! + template.parts[i + 1]!;
  return sql;
}
