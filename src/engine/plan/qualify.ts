/**
 * Column references of one query level written with their table: `c_name` becomes
 * `customer.c_name` where exactly one FROM entry of that level has such a column, as
 * PostgreSQL resolves it. Plans that move a table's references into a joined result
 * (join-pushdown.ts) need every reference to name its table; statements such as TPC-H's name
 * columns alone. The meaning never changes:
 *  - a name no FROM entry has (an output name, a reference to an outer query) stays as it is,
 *    and so does one that several entries have (PostgreSQL refuses it as ambiguous);
 *  - a bare name in ORDER BY that is also an output column's name means that output column
 *    (PostgreSQL's rule), so it stays;
 *  - subqueries are their own levels: not entered (their references to this level stay);
 *  - a FROM entry whose columns are not known (a subquery, a function, a USING or NATURAL join,
 *    whose merged columns belong to no one table) leaves the whole level as written.
 */
import type { Node, SelectStmt } from '@pgsql/types';
import { asKind, fieldNames, lower, nameNode, walk } from '../tree/ast.js';

interface Entry {
  /** The name a reference qualifies with: the alias as written, else the relation's name. */
  qualifier: string;
  columns: Set<string>;
}

/**
 * Qualifies the references of `select`'s own level in place; `columnsOf` gives a relation's
 * column names (null when unknown). Answers whether the level was qualified.
 */
export function qualifyColumns(select: SelectStmt, columnsOf: (relname: string) => readonly string[] | null): boolean {
  if (select.op !== 'SETOP_NONE') return false;
  const entries: Entry[] = [];
  const joinConditions: Node[] = [];
  const collect = (item: Node | undefined): boolean => {
    const range = asKind(item, 'RangeVar');
    if (range) {
      const columns = columnsOf(String(range.relname));
      if (!columns) return false;
      entries.push({ qualifier: String(range.alias?.aliasname ?? range.relname), columns: new Set(columns.map(lower)) });
      return true;
    }
    const join = asKind(item, 'JoinExpr');
    if (!join || join.usingClause || join.isNatural) return false;
    if (join.quals) joinConditions.push(join.quals);
    return collect(join.larg) && collect(join.rarg);
  };
  if (!(select.fromClause ?? []).every(collect) || entries.length === 0) return false;

  const qualify = (tree: unknown) =>
    walk(tree, (nodeType, node) => {
      if (nodeType === 'SelectStmt') return 'skip';
      if (nodeType !== 'ColumnRef') return;
      const fields = fieldNames(node.fields);
      if (fields.length !== 1 || fields[0] === '*') return;
      const owners = entries.filter((e) => e.columns.has(lower(fields[0]!)));
      if (owners.length === 1) node.fields = [nameNode(owners[0]!.qualifier), ...(node.fields ?? [])];
    });
  qualify(select.targetList);
  qualify(select.whereClause);
  qualify(joinConditions);
  qualify(select.groupClause);
  qualify(select.havingClause);
  qualify(select.distinctClause);
  qualify(select.windowClause);
  for (const item of select.sortClause ?? []) if (!sortsByOutputName(select, item)) qualify(item);
  return true;
}

/** Whether an ORDER BY item is a bare name of one of the select list's output columns (which it then means). */
export function sortsByOutputName(select: SelectStmt, item: Node): boolean {
  const bare = fieldNames(asKind(asKind(item, 'SortBy')?.node, 'ColumnRef')?.fields);
  if (bare.length !== 1) return false;
  return (select.targetList ?? []).some((target) => {
    const result = asKind(target, 'ResTarget');
    const fields = fieldNames(asKind(result?.val, 'ColumnRef')?.fields);
    return lower(result?.name ?? fields[fields.length - 1] ?? '') === lower(bare[0]!);
  });
}
