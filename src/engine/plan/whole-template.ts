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
import { isObject, walk } from '../tree/ast.js';
import type { WholePlan } from './whole.js';

export interface WholeTemplate {
  /** The source text around the holes: parts[0] hole parts[1] hole ... */
  parts: string[];
  /** Which constant (in walk order) fills each hole. */
  holes: number[];
  /**
   * Per constant: whether it may be sent as a parameter. Not where PostgreSQL reads a constant
   * as something else: a position in ORDER BY, GROUP BY or DISTINCT ON, a type's modifier.
   */
  parameters: boolean[];
  plan: Omit<WholePlan, 'sql'>;
  /** The key of the statement's result columns (engine.ts). */
  columnsKey: string;
  /** What the access checks found, for the errors of the statement (engine.ts). */
  narrowed: boolean;
  hiddenColumns: HiddenColumns;
  /** The source tables the statement reads (`schema.table`), for the query log. */
  tables: string[];
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
  walk(tree, (nodeType, node) => {
    if (nodeType !== 'A_Const' || node.isnull) return;
    const text = constantText(node as Record<string, unknown>);
    if (text === null) fillable = false;
    else texts.push(text);
  });
  return fillable ? texts : null;
}

export function constantText(constant: Record<string, unknown>): string | null {
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

/** The constants of every type modifier (`numeric(10, 2)`), wherever a type name stands. */
function collectTypeModifiers(value: unknown, into: Set<unknown>): void {
  if (Array.isArray(value)) for (const item of value) collectTypeModifiers(item, into);
  else if (isObject(value)) {
    for (const [key, child] of Object.entries(value)) {
      if (key === 'typmods') walk(child, (nodeType, node) => void (nodeType === 'A_Const' && into.add(node)));
      else collectTypeModifiers(child, into);
    }
  }
}

const nonNegative = (number: string) => (number.startsWith('-') ? null : number);

/**
 * A copy of `tree` with each non-null constant replaced by a marked string constant, and which
 * of the constants may be parameters.
 */
export function markedTree(tree: ParseResult): { tree: ParseResult; parameters: boolean[] } {
  const copy = structuredClone(tree);
  // Constants that stand for something other than their value (or in syntax that takes only constants).
  const literalOnly = new Set<unknown>();
  const constantOf = (node: unknown) => (isObject(node) && isObject(node.A_Const) ? node.A_Const : undefined);
  collectTypeModifiers(copy, literalOnly);
  // A string cast to a type with modifiers (interval '1' day, '1'::bit(3)) is read with them;
  // a parameter would be read first, then cast: other values.
  walk(copy, (nodeType, node) => {
    if (nodeType === 'TypeCast' && (node.typeName?.typmods?.length ?? 0) > 0) literalOnly.add(constantOf(node.arg));
  });
  // Every constant of an ORDER BY, GROUP BY (grouping sets too) or DISTINCT ON item, not only
  // the positions themselves: simpler to see right, and such statements merely skip preparing.
  const constantsBelow = (value: unknown) => walk(value, (nodeType, node) => void (nodeType === 'A_Const' && literalOnly.add(node)));
  walk(copy, (nodeType, node) => {
    if (nodeType === 'SortBy') {
      literalOnly.add(constantOf(node.node));
      constantsBelow(node.node);
    } else if (nodeType === 'SelectStmt') {
      for (const item of [...(node.groupClause ?? []), ...(node.distinctClause ?? [])]) {
        literalOnly.add(constantOf(item));
        constantsBelow(item);
      }
    }
  });
  const parameters: boolean[] = [];
  walk(copy, (nodeType, node) => {
    if (nodeType !== 'A_Const' || node.isnull) return;
    const body = node as Record<string, unknown>;
    parameters.push(!literalOnly.has(node));
    for (const key of Object.keys(body)) if (key !== 'location') delete body[key];
    body.sval = { sval: `${MARKER}${parameters.length - 1}` };
  });
  return { tree: copy, parameters };
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

const INT4_MAX = 2_147_483_647n;
/** A string constant's parameter: written `$n`, without a cast. */
const UNKNOWN = 'unknown';
const INT8_MAX = 9_223_372_036_854_775_807n;

/**
 * The type PostgreSQL gives a constant written this way: a string is `unknown`, sent as an
 * untyped parameter, which PostgreSQL types by where it stands, as it types a string constant.
 */
function parameterType(text: string): string | null {
  if (text.startsWith("'")) return UNKNOWN;
  if (text === 'true' || text === 'false') return 'bool';
  if (/^\d+$/.test(text)) return BigInt(text) <= INT4_MAX ? 'int4' : BigInt(text) <= INT8_MAX ? 'int8' : 'numeric';
  if (/^[\d.eE+-]+$/.test(text)) return 'numeric';
  return null;
}

/** The parameterized texts of each template, by the parameters' types: written once, the same string each time. */
const written = new WeakMap<readonly string[], Map<string, string>>();

/**
 * The statement with its constants as typed parameters ($1::int4, ...), each of the type
 * PostgreSQL gives the constant itself, and their values; null when a constant must stay
 * written out (a string, whose type comes from where it stands, or a constant that is not a value).
 */
export function parameterized(
  template: Pick<WholeTemplate, 'parts' | 'holes' | 'parameters'>,
  constants: readonly string[],
): { sql: string; values: string[] } | null {
  const numbers = new Map<number, number>();
  const values: string[] = [];
  const types: string[] = [];
  for (let i = 0; i < template.holes.length; i++) {
    const constant = template.holes[i]!;
    const type = template.parameters[constant] ? parameterType(constants[constant]!) : null;
    if (!type) return null;
    if (!numbers.has(constant)) {
      values.push(type === UNKNOWN ? constants[constant]!.slice(1, -1) : constants[constant]!);
      numbers.set(constant, values.length);
    } else if (type === UNKNOWN) {
      // One untyped parameter in two places would take the type of the first: each string stays its own.
      return null;
    }
    types.push(type);
  }
  let byTypes = written.get(template.parts);
  if (!byTypes) written.set(template.parts, (byTypes = new Map()));
  const typesKey = types.join(',');
  let sql = byTypes.get(typesKey);
  if (sql === undefined) {
    sql = template.parts[0]!;
    for (let i = 0; i < template.holes.length; i++) {
      const number = `$${numbers.get(template.holes[i]!)}`;
      sql += (types[i] === UNKNOWN ? number : `${number}::${types[i]}`) + template.parts[i + 1]!;
    }
    byTypes.set(typesKey, sql);
  }
  return { sql, values };
}
