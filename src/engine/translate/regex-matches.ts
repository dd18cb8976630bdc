/**
 * PostgreSQL's set-returning regular-expression functions, as rows of the engine's lists
 * (unnest, in a select list or in FROM):
 *  - regexp_split_to_table(s, pattern [, flags]): the elements of regexp_split_to_array
 *    (regex-split.ts), PostgreSQL's split points.
 *  - regexp_matches(s, pattern [, flags]): a text[] per match, of its capturing groups (the whole
 *    match without groups); without 'g' the first match only, no row without a match. The
 *    pattern must find PostgreSQL's matches (posix-regex.ts); with 'g' it must not match the empty
 *    text (PostgreSQL then also counts the empty match right after a match, RE2 skips it). Every
 *    group takes part in each match there (no alternatives, no quantified groups), so RE2's ''
 *    for a group that took no part never stands for PostgreSQL's NULL.
 */
import type { A_Expr, Node } from '@pgsql/types';
import { nameNode } from '../tree/ast.js';
import {
  engineCall,
  evaluatedOnce,
  int,
  isNullConst,
  lambdas,
  literalText,
  notAsPostgres,
  stringConst,
  typeNamed,
} from '../tree/syntax-nodes.js';
import { matchShape } from './posix-regex.js';
import { regexSplit } from './regex-split.js';

const FORMS_HINT = "Give the text, a constant pattern and constant flags ('g', 'i', 'c').";

export function regexpSplitRows(args: Node[]): Node {
  const split = regexSplit(args, 'regexp_split_to_table');
  if (!split) throw notAsPostgres(`regexp_split_to_table with ${args.length} arguments`, FORMS_HINT);
  return engineCall('unnest', [split]);
}

/** An empty list of text arrays, typed. */
const noRows = (): Node => ({
  TypeCast: { arg: { A_ArrayExpr: {} }, typeName: { ...typeNamed('varchar'), arrayBounds: [int(-1), int(-1)] } },
});

export function regexpMatchesRows(args: Node[]): Node {
  if (args.length !== 2 && args.length !== 3) throw notAsPostgres(`regexp_matches with ${args.length} arguments`, FORMS_HINT);
  const [text, patternArg, flagsArg] = args as [Node, Node, Node?];
  const flags = flagsArg === undefined ? '' : literalText(flagsArg);
  if (flags === null || !/^[gic]*$/.test(flags)) {
    throw notAsPostgres(`regexp_matches with the flags ${flags === null ? 'given by an expression' : `'${flags}'`}`, FORMS_HINT);
  }
  if (isNullConst(patternArg) || isNullConst(flagsArg)) return engineCall('unnest', [noRows()]);
  const pattern = literalText(patternArg);
  if (pattern === null) throw notAsPostgres('regexp_matches with a pattern that is not a constant', FORMS_HINT);
  const caseInsensitive = flags.lastIndexOf('i') > flags.lastIndexOf('c');
  const shape = matchShape(pattern, caseInsensitive);
  const global = flags.includes('g');
  if (global && shape.mayBeEmpty) {
    throw notAsPostgres(
      "regexp_matches(..., 'g') of a pattern that matches the empty text",
      'Write the pattern so that it matches at least one character (x+ rather than x*).',
    );
  }
  const regex = stringConst(`${caseInsensitive ? '(?si)' : '(?s)'}${shape.regex}`);
  const groups = shape.groups === 0 ? [0] : Array.from({ length: shape.groups }, (_, i) => i + 1);
  const rows = evaluatedOnce(text, (value) => {
    if (!global) {
      const match: Node = { A_ArrayExpr: { elements: groups.map((g) => engineCall('regexp_extract', [value, regex, int(g)])) } };
      const found = engineCall('regexp_matches', [value, regex]);
      return { CaseExpr: { args: [{ CaseWhen: { expr: found, result: { A_ArrayExpr: { elements: [match] } } } }], defresult: noRows() } };
    }
    // One list per group, each with an element per match; the rows take the i-th of each.
    const index: Node = { ColumnRef: { fields: [nameNode('vdb_i')] } };
    const element = (g: number): Node => ({
      A_Indirection: { arg: engineCall('regexp_extract_all', [value, regex, int(g)]), indirection: [{ A_Indices: { uidx: index } }] },
    });
    const lambda: A_Expr = {
      kind: 'AEXPR_OP',
      name: [nameNode('->')],
      lexpr: index,
      rexpr: { A_ArrayExpr: { elements: groups.map(element) } },
    };
    lambdas.add(lambda);
    const count = engineCall('len', [engineCall('regexp_extract_all', [value, regex, int(groups[0]!)])]);
    return engineCall('list_transform', [engineCall('generate_series', [int(1), count]), { A_Expr: lambda }]);
  });
  return engineCall('unnest', [rows]);
}
