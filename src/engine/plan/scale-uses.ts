/**
 * Which columns a statement may show or compute with, as opposed to only compare: a numeric
 * column whose values have different scales (1.5, 2.25) can be loaded exactly, but the engine
 * writes its values with one scale. Conditions, joins, ORDER BY, GROUP BY, count() and casts
 * to a type of fixed scale never depend on a value's scale; every other use does.
 *
 * Names are matched alone (a column `n` of any table, a whole row, `*`), so a use of another
 * table's `n` counts too: the answer errs towards "shown", which only makes the engine check
 * the values where the statement reads them (load-scale.ts).
 */
import type { Node, ParseResult } from '@pgsql/types';
import { fieldNames, isNode, isObject, lower, walk } from '../tree/ast.js';

const COMPARISONS = new Set(['=', '<>', '!=', '<', '>', '<=', '>=']);
const COMPARING_KINDS = new Set(['AEXPR_IN', 'AEXPR_BETWEEN', 'AEXPR_NOT_BETWEEN', 'AEXPR_BETWEEN_SYM', 'AEXPR_NOT_BETWEEN_SYM']);
const DISTINCT_KINDS = new Set(['AEXPR_DISTINCT', 'AEXPR_NOT_DISTINCT']);

/** Types whose values have a fixed scale (or none): a cast to them reads a numeric by its value. */
const FIXED_SCALE = new Set(['int2', 'int4', 'int8', 'smallint', 'integer', 'int', 'bigint', 'float4', 'float8', 'real', 'double']);

function fixedScaleCast(typeName: { names?: Node[]; typmods?: Node[] } | undefined): boolean {
  const names = fieldNames(typeName?.names).map(lower);
  const name = names[names.length - 1] ?? '';
  if (FIXED_SCALE.has(name)) return true;
  // numeric(p) and numeric(p, s) have one scale; numeric alone keeps each value's own.
  return (name === 'numeric' || name === 'decimal') && (typeName?.typmods?.length ?? 0) > 0;
}

export interface ScaleUses {
  /** Whether the statement may show or compute with a column of this name. */
  shown(column: string): boolean;
}

/** The uses of columns in `tree` (see the module comment). */
export function scaleUses(tree: ParseResult): ScaleUses {
  const shown = new Set<string>();
  let everything = false;
  const aliases = new Set<string>();
  walk(tree, (nodeType, node) => {
    if (nodeType !== 'RangeVar') return;
    aliases.add(lower(String(node.relname)));
    if (node.alias) aliases.add(lower(String(node.alias.aliasname)));
    // `t AS x(a, b)`: its columns go by other names.
    if (node.alias?.colnames) everything = true;
  });

  const reference = (fields: unknown, compared: boolean) => {
    const names = fieldNames(fields);
    const last = names[names.length - 1] ?? '*';
    // `*`, `t.*` and a whole row (`t`) show every column.
    if (last === '*' || (names.length === 1 && aliases.has(lower(last)))) everything = true;
    else if (!compared) shown.add(lower(last));
  };

  /** Visits `value`; `compared` says whether a column reference right here is only compared. */
  const visit = (value: unknown, compared: boolean): void => {
    if (Array.isArray(value)) {
      for (const item of value) visit(item, compared);
      return;
    }
    if (!isObject(value)) return;
    if (!isNode(value)) {
      for (const child of Object.values(value)) visit(child, false);
      return;
    }
    const [nodeType, body] = Object.entries(value)[0] as [string, Record<string, unknown>];
    if (nodeType === 'ColumnRef') return reference(body.fields, compared);
    // The fields of this node whose references are only compared.
    const comparedFields = new Set<string>();
    if (nodeType === 'List') comparedFields.add(compared ? 'items' : '');
    if (nodeType === 'A_Expr') {
      const op = fieldNames(body.name)[0] ?? '';
      const exprKind = String(body.kind);
      if ((exprKind === 'AEXPR_OP' && COMPARISONS.has(op)) || COMPARING_KINDS.has(exprKind) || DISTINCT_KINDS.has(exprKind)) {
        comparedFields.add('lexpr').add('rexpr');
      }
    }
    if (nodeType === 'NullTest') comparedFields.add('arg');
    if (nodeType === 'SortBy') comparedFields.add('node');
    if (nodeType === 'TypeCast' && fixedScaleCast(body.typeName as never)) comparedFields.add('arg');
    if (nodeType === 'SubLink' && (body.subLinkType === 'ANY_SUBLINK' || body.subLinkType === 'ALL_SUBLINK'))
      comparedFields.add('testexpr');
    if (nodeType === 'SelectStmt') comparedFields.add('groupClause');
    if (nodeType === 'WindowDef') comparedFields.add('partitionClause');
    if (
      nodeType === 'FuncCall' &&
      fieldNames(body.funcname)
        .map(lower)
        .join('.')
        .replace(/^pg_catalog\./, '') === 'count'
    ) {
      comparedFields.add('args');
    }
    for (const [field, child] of Object.entries(body)) {
      // A call's OVER holds its window unwrapped: visited as the WindowDef it is.
      if (nodeType === 'FuncCall' && field === 'over' && isObject(child)) visit({ WindowDef: child }, false);
      else visit(child, comparedFields.has(field));
    }
  };
  visit(tree, false);
  return { shown: (column) => everything || shown.has(lower(column)) };
}
