/**
 * PostgreSQL's pattern matching by SQL patterns, in the engine's terms:
 *  - LIKE / ILIKE / NOT LIKE [ESCAPE e]: PostgreSQL escapes with a backslash unless told otherwise
 *    (ESCAPE '' escapes nothing), the engine has no default escape character: every LIKE gets its
 *    escape character spelled out. A constant pattern is written with a backslash as its escape,
 *    as PostgreSQL's like_escape does (the escape applies to the pattern as written, before ILIKE
 *    folds case; the engine takes one-byte escapes only, and reads % and _ first).
 *  - SIMILAR TO over a constant pattern and escape: the pattern as an RE2 expression built as
 *    PostgreSQL builds its own (similar-regex.ts), and searched as PostgreSQL searches it.
 *  - SUBSTRING(s SIMILAR p ESCAPE e): the part between the two escape-double-quote separators,
 *    the part before being the shortest and the part itself the longest that let the whole match
 *    (PostgreSQL's rule); each split point is found by whole matches of each part, so the engine's
 *    own preferences (RE2's leftmost-first) play no part.
 */
import type { A_Expr, FuncCall, Node } from '@pgsql/types';
import { asKind, nameNode } from '../tree/ast.js';
import { badRequest } from '../../errors.js';
import { similarRegex } from './similar-regex.js';
import { calledName, engineCall, int, isNullConst, lambdas, notAsPostgres, op, stringConst } from '../tree/syntax-nodes.js';
import { typeNameOf } from './postgres-values.js';

const LIKE_FUNCTIONS: Record<string, string> = {
  '~~': 'like_escape',
  '!~~': 'not_like_escape',
  '~~*': 'ilike_escape',
  '!~~*': 'not_ilike_escape',
};

/** The first part of an operator's name: '~~' for `a LIKE b`. */
const operatorName = (expr: A_Expr): string | undefined => asKind(expr.name?.[0], 'String')?.sval;

/** The text of a string constant (possibly cast to text), null for a NULL constant, undefined for anything else. */
export function constantText(node: Node | undefined): string | null | undefined {
  if (isNullConst(node)) return null;
  const constant = asKind(node, 'A_Const');
  if (constant?.sval) return constant.sval.sval ?? '';
  const typeCast = asKind(node, 'TypeCast');
  if (typeCast && ['text', 'varchar'].includes(typeNameOf(typeCast.typeName) ?? '')) return constantText(typeCast.arg);
  return undefined;
}

/** The pattern and escape of `x LIKE p ESCAPE e` (parsed as `x ~~ like_escape(p, e)`), or of `x SIMILAR TO ...`. */
function patternAndEscape(rexpr: Node | undefined, helper: string): { pattern: Node; escape?: Node } | null {
  const fc = asKind(rexpr, 'FuncCall');
  const name = fc ? calledName(fc).replace(/^pg_catalog\./, '') : '';
  const args = fc?.args ?? [];
  if (name !== helper) return rexpr ? { pattern: rexpr } : null;
  if (args.length === 1) return { pattern: args[0]! };
  if (args.length === 2) return { pattern: args[0]!, escape: args[1]! };
  return null;
}

const INVALID_ESCAPE = () => badRequest('invalid escape string', 'Escape string must be empty or one character.');

/** A LIKE pattern whose escape character is `escape`, written with a backslash as the escape character (PostgreSQL's like_escape). */
function backslashPattern(pattern: string, escape: string): string {
  let out = '';
  let afterEscape = false;
  for (const c of pattern) {
    if (c === escape && !afterEscape) {
      out += '\\';
      afterEscape = true;
    } else if (c === '\\') {
      out += afterEscape ? '\\' : '\\\\';
      afterEscape = false;
    } else {
      out += c;
      afterEscape = false;
    }
  }
  return out;
}

/** `a LIKE b [ESCAPE e]` (and ILIKE, NOT) as the engine's like_escape(a, b, e). */
export function likeCall(expr: A_Expr): Node | null {
  if (expr.kind !== 'AEXPR_LIKE' && expr.kind !== 'AEXPR_ILIKE') return null;
  const fn = LIKE_FUNCTIONS[operatorName(expr) ?? ''];
  const parts = patternAndEscape(expr.rexpr, 'like_escape');
  if (!fn || !parts || !expr.lexpr) return null;
  let { pattern } = parts;
  let escape = parts.escape ?? stringConst('\\');
  const escapeText = constantText(escape);
  const patternText = constantText(pattern);
  const caseless = expr.kind === 'AEXPR_ILIKE';
  if (escapeText === undefined && caseless) {
    throw notAsPostgres('ILIKE ... ESCAPE with an escape character given by an expression', 'Write the escape character as a constant.');
  }
  if (escapeText !== undefined && escapeText !== null) {
    const chars = [...escapeText];
    if (chars.length > 1) throw INVALID_ESCAPE();
    const [char] = chars;
    if (char !== undefined && typeof patternText === 'string') {
      // A constant pattern is written with a backslash as its escape (PostgreSQL's like_escape
      // applies the escape character to the pattern as written, before ILIKE folds case).
      const written = char === '\\' ? patternText : backslashPattern(patternText, char);
      if (/(^|[^\\])(\\\\)*\\$/.test(written)) throw badRequest('LIKE pattern must not end with escape character');
      pattern = stringConst(written);
      escape = stringConst('\\');
    } else if (char !== undefined && patternText === undefined) {
      // The engine's escape is one byte, compared after ILIKE folds case, and reads % and _ as wildcards first.
      const otherwise =
        char.codePointAt(0)! > 0x7f || char === '%' || char === '_' || (caseless && char.toLowerCase() !== char.toUpperCase());
      if (otherwise) {
        throw notAsPostgres(
          'LIKE ... ESCAPE with a character other than ASCII, % or _ (ILIKE: a letter) and a pattern that is not a constant',
          'Escape with an ASCII character that is not a letter, such as \\ or #.',
        );
      }
    }
  }
  return engineCall(fn, [expr.lexpr, pattern, escape]);
}

/** The SQL regular expression of a constant pattern and escape, or a refusal; null when either is NULL. */
function constantRegex(pattern: Node, escape: Node | undefined, what: string) {
  const patternText = constantText(pattern);
  const escapeText = escape === undefined ? '\\' : constantText(escape);
  if (patternText === undefined || escapeText === undefined) {
    throw notAsPostgres(
      `${what} with a pattern or escape that is not a constant`,
      'Write the pattern and the escape character as constants.',
    );
  }
  if (patternText === null || escapeText === null) return null;
  return similarRegex(patternText, escapeText);
}

const nullOf = (): Node => ({ A_Const: { isnull: true } });

/** Whether the whole of `value` matches RE2's `regex` ('.' matching newlines too, as in PostgreSQL). */
const fullMatch = (value: Node, regex: string): Node => engineCall('regexp_full_match', [value, stringConst(`(?s)${regex}`)]);

const group = (parts: string[]): string => parts.map((part) => `(?:${part})`).join('');

/** `a SIMILAR TO p [ESCAPE e]` and its NOT as a whole match of the engine's regular expression. */
export function similarCall(expr: A_Expr): Node | null {
  if (expr.kind !== 'AEXPR_SIMILAR' || !expr.lexpr) return null;
  const parts = patternAndEscape(expr.rexpr, 'similar_to_escape');
  if (!parts) return null;
  const regex = constantRegex(parts.pattern, parts.escape, 'SIMILAR TO');
  // NULL for a NULL pattern or escape, as in PostgreSQL (its similar_to_escape is strict).
  if (!regex) return { TypeCast: { arg: nullOf(), typeName: { names: [nameNode('boolean')] } } };
  // A search, as PostgreSQL's: its anchors are in the expression.
  const matches = engineCall('regexp_matches', [expr.lexpr, stringConst(`(?s)${regex.whole}`)]);
  return operatorName(expr) === '!~' ? { BoolExpr: { boolop: 'NOT_EXPR', args: [matches] } } : matches;
}

/** A lambda `vdb_k -> body` of the engine. */
function lambda(name: string, body: (ref: Node) => Node): Node {
  const ref: Node = { ColumnRef: { fields: [nameNode(name)] } };
  const made: A_Expr = { kind: 'AEXPR_OP', name: [nameNode('->')], lexpr: ref, rexpr: body(ref) };
  lambdas.add(made);
  return { A_Expr: made };
}

const element = (list: Node, index: number): Node => ({ A_Indirection: { arg: list, indirection: [{ A_Indices: { uidx: int(index) } }] } });

/** `build(ref)` with `value` computed once (a lambda named `name`: nested ones must differ). */
function once(value: Node, name: string, build: (ref: Node) => Node): Node {
  if (asKind(value, 'ColumnRef') || asKind(value, 'A_Const')) return build(value);
  return element(engineCall('list_transform', [{ A_ArrayExpr: { elements: [value] } }, lambda(name, build)]), 1);
}

/** The values of 0..last for which `keep` holds, in order. */
const filtered = (last: Node, name: string, keep: (ref: Node) => Node): Node =>
  engineCall('list_filter', [engineCall('range', [int(0), op('+', last, int(1))]), lambda(name, keep)]);

/**
 * `substring(s SIMILAR p ESCAPE e)` (also written `substring(s FROM p FOR e)`): the text between
 * the separators, NULL when the whole does not match. Null for other calls of substring.
 */
export function similarSubstring(fc: FuncCall): Node | null {
  const args = fc.args ?? [];
  const name = calledName(fc).replace(/^pg_catalog\./, '');
  if (name !== 'substring' || fc.over) return null;
  // substring(text FROM text) is PostgreSQL's POSIX regular expression, whose matches (leftmost
  // longest) the engine's RE2 (leftmost first) does not find alike.
  if (args.length === 2 && typeof constantText(args[1]) === 'string') {
    throw notAsPostgres(
      'substring(text FROM pattern) with a POSIX regular expression',
      "Use SUBSTRING(text SIMILAR pattern ESCAPE '#') with #\" separators, or substr with positions.",
    );
  }
  if (args.length !== 3) return null;
  // substring(text, text, text) is the SQL regular expression's; with numbers, the characters'.
  if (constantText(args[1]) === undefined && constantText(args[2]) === undefined) return null;
  const regex = constantRegex(args[1]!, args[2]!, 'SUBSTRING ... SIMILAR');
  if (!regex) return { TypeCast: { arg: nullOf(), typeName: { names: [nameNode('text')] } } };
  if (!regex.parts) {
    throw notAsPostgres(
      'SUBSTRING ... SIMILAR with parentheses that close or span its #" separators',
      'Balance the parentheses within each part of the pattern.',
    );
  }
  const [first, second, third] = regex.parts;
  return once(args[0]!, 'vdb_text', (text) => {
    if (second === undefined) {
      return { CaseExpr: { args: [{ CaseWhen: { expr: fullMatch(text, first!), result: text } }], defresult: nullOf() } };
    }
    const length = engineCall('length', [text]);
    const rest = group([second, ...(third === undefined ? [] : [third])]);
    // The shortest start that lets the rest match.
    const starts = filtered(length, 'vdb_k', (k) => ({
      BoolExpr: {
        boolop: 'AND_EXPR',
        args: [fullMatch(engineCall('left', [text, k]), first!), fullMatch(engineCall('substr', [text, op('+', k, int(1))]), rest)],
      },
    }));
    if (third === undefined) {
      return once(element(starts, 1), 'vdb_start', (k) => engineCall('substr', [text, op('+', k, int(1))]));
    }
    return once(element(starts, 1), 'vdb_start', (k) => {
      // Then the longest middle that lets the end match.
      const lengths = filtered(op('-', length, k), 'vdb_m', (m) => ({
        BoolExpr: {
          boolop: 'AND_EXPR',
          args: [
            fullMatch(engineCall('substr', [text, op('+', k, int(1)), m]), second),
            fullMatch(engineCall('substr', [text, op('+', op('+', k, m), int(1))]), third),
          ],
        },
      }));
      return engineCall('substr', [text, op('+', k, int(1)), element(lengths, -1)]);
    });
  });
}
