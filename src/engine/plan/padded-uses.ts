/**
 * Which columns a statement uses other than by showing them as they are: a PostgreSQL char(n)
 * (bpchar) holds its values padded with spaces ('5    ') and compares, joins, measures and
 * concatenates them without the padding; the engine loads the padded text and would use it as
 * it is. Shown bare in the outermost select list, a padded value is what PostgreSQL shows too;
 * every other use (a condition, a join, a function, ORDER BY, GROUP BY, DISTINCT, a subquery, a
 * set operation) may differ, and the load refuses it where a value ends with a space
 * (exec/load-padding.ts).
 *
 * The select list of EXISTS (SELECT * ...) uses nothing: only whether a row is there counts.
 * Names are matched alone (a column `code` of any table), and `*` or a whole row anywhere but
 * the outermost select list and EXISTS uses every column: the answer errs towards "used", which only
 * makes the load check the values. A string constant ending with a space, or a cast to
 * varchar, is noted: PostgreSQL compares a char(n) with it as a char(n), without trailing
 * spaces, even where no value of the column is padded, so a used char(n) column is refused then
 * whatever its values. Another source's text is text at PostgreSQL (shipped as text[]): a
 * char(n) compared with it loses its padding only, as the check assumes.
 */
import type { Node, ParseResult } from '@pgsql/types';
import type { ColumnDef } from '../../catalog/types.js';
import { paddedChar } from '../../connectors/kinds.js';
import type { JoinGroup } from './join-pushdown.js';
import type { ScanPlan } from './scans.js';
import { asKind, fieldNames, lower, statementOf, walk } from '../tree/ast.js';

/** Type names of varchar (a cast to them is compared with a char(n) as a char(n)). */
const VARCHAR = new Set(['varchar', 'character varying']);

export interface PaddedUses {
  /** Whether the statement uses a column of this name other than by showing it bare in the outermost select list. */
  used(column: string): boolean;
  /**
   * Whether the statement holds what PostgreSQL compares with a char(n) without its trailing
   * spaces, whatever the char(n)'s values: a string constant ending with a space (read as a
   * char(n) there), a cast to varchar (varchar compared with a char(n) is read as one).
   */
  paddedConstant(): boolean;
  /**
   * Also check PostgreSQL varchar columns used beyond showing them: the statement uses a char(n)
   * column, and PostgreSQL compares a varchar with it without their trailing spaces (set by the load).
   */
  varchar?: boolean;
}

/** Every column used (uses unknown). */
export const ALL_USED: PaddedUses = { used: () => true, paddedConstant: () => false };

/** No column used beyond showing it (rows that only go elsewhere as they are). */
export const NONE_USED: PaddedUses = { used: () => false, paddedConstant: () => false };

/** The uses of columns in `tree` (see the module comment); worked out when first asked. */
export function paddedUses(tree: ParseResult): PaddedUses {
  let found: Found | undefined;
  return {
    used: (column) => {
      found ??= usesOf(tree);
      return found.everything || found.names.has(lower(column));
    },
    paddedConstant: () => (found ??= usesOf(tree)).constant,
  };
}

/** The names a condition (a row condition) refers to, or every name where it refers to a whole row or `*`. */
export function conditionUses(condition: Node): PaddedUses {
  return paddedUses({ stmts: [{ stmt: { SelectStmt: { whereClause: condition } } }] } as ParseResult);
}

interface Found {
  names: Set<string>;
  everything: boolean;
  constant: boolean;
}

function usesOf(tree: ParseResult): Found {
  const names = new Set<string>();
  let everything = false;
  let constant = false;
  const aliases = new Set<string>();
  walk(tree, (nodeType, node) => {
    if (nodeType === 'RangeVar') {
      aliases.add(lower(String(node.relname)));
      if (node.alias) aliases.add(lower(String(node.alias.aliasname)));
      if (node.alias?.colnames) everything = true;
    } else if (nodeType === 'RangeSubselect' || nodeType === 'RangeFunction') {
      if (node.alias) aliases.add(lower(String(node.alias.aliasname)));
      if (node.alias?.colnames) everything = true;
    } else if (nodeType === 'CommonTableExpr') {
      aliases.add(lower(String(node.ctename)));
      if (node.aliascolnames) everything = true;
    } else if (nodeType === 'JoinExpr') {
      // NATURAL and USING compare columns that no ColumnRef names.
      if (node.isNatural) everything = true;
      for (const name of fieldNames(node.usingClause)) names.add(lower(name));
      if (node.alias) aliases.add(lower(String(node.alias.aliasname)));
    } else if (nodeType === 'A_Const' && node.sval && String(node.sval.sval ?? '').endsWith(' ')) {
      constant = true;
    } else if (nodeType === 'TypeName') {
      const type = fieldNames(node.names).map(lower);
      if (VARCHAR.has(type[type.length - 1] ?? '')) constant = true;
    }
  });

  // The outermost select list's bare columns: shown as they are, unless ordered, grouped or made distinct.
  const bare = new Set<object>();
  const select = asKind(statementOf(tree), 'SelectStmt');
  if (select && (!select.op || select.op === 'SETOP_NONE') && !select.distinctClause) {
    const targets = (select.targetList ?? []).map((t) => asKind(t, 'ResTarget'));
    const columnOf = (target: (typeof targets)[number]): string | null => {
      const fields = fieldNames(asKind(target?.val, 'ColumnRef')?.fields);
      const last = fields[fields.length - 1];
      if (last === undefined || last === '*' || (fields.length === 1 && aliases.has(lower(last)))) return null;
      return last;
    };
    const stars = targets.some((t) => fieldNames(asKind(t?.val, 'ColumnRef')?.fields).includes('*'));
    for (const target of targets) {
      const star = fieldNames(asKind(target?.val, 'ColumnRef')?.fields).includes('*');
      if (target && (star || columnOf(target) !== null)) bare.add(target);
    }
    // ORDER BY 2, GROUP BY 2 or an output name: the column it names is used.
    const byOutput = (item: Node | undefined) => {
      const sortNode = asKind(item, 'SortBy')?.node ?? item;
      const position = asKind(sortNode, 'A_Const')?.ival;
      if (position) {
        if (stars) everything = true;
        const column = columnOf(targets[Number(position.ival ?? 0) - 1]);
        if (column !== null) names.add(lower(column));
        return;
      }
      const fields = fieldNames(asKind(sortNode, 'ColumnRef')?.fields);
      if (fields.length !== 1) return;
      for (const target of targets) {
        const column = columnOf(target);
        if (column !== null && target?.name && lower(target.name) === lower(fields[0]!)) names.add(lower(column));
      }
    };
    [...(select.sortClause ?? []), ...(select.groupClause ?? [])].forEach(byOutput);
  }

  // EXISTS (SELECT * ...) asks whether a row is there: its select list uses no column.
  walk(tree, (nodeType, node) => {
    if (nodeType !== 'SubLink' || node.subLinkType !== 'EXISTS_SUBLINK') return;
    const inner = asKind(node.subselect, 'SelectStmt');
    if (!inner || (inner.op && inner.op !== 'SETOP_NONE') || inner.distinctClause || inner.groupClause || inner.sortClause) return;
    for (const target of inner.targetList ?? []) bare.add(asKind(target, 'ResTarget') ?? {});
  });

  walk(tree, (nodeType, node) => {
    if (nodeType === 'ResTarget' && bare.has(node)) return 'skip';
    if (nodeType !== 'ColumnRef') return;
    const fields = fieldNames(node.fields);
    const last = fields[fields.length - 1] ?? '*';
    if (last === '*' || (fields.length === 1 && aliases.has(lower(last)))) everything = true;
    else names.add(lower(last));
  });
  return { names, everything, constant };
}

/**
 * The statement's uses; where it uses a char(n) column beyond showing it, PostgreSQL's varchar
 * columns it uses are checked too (PostgreSQL compares them with a char(n) without trailing spaces).
 */
export function usedWithChars(scans: Iterable<ScanPlan>, joins: readonly JoinGroup[], uses: PaddedUses): PaddedUses {
  const used = (column: ColumnDef, source: { kind: string }) => paddedChar(column, source) && uses.used(column.name);
  const inScans = [...scans].some((plan) => {
    const resolved = plan.bound.resolved;
    const columns = [...plan.columns, ...(plan.aggregates ?? []).flatMap((a) => (a.column ? [a.column] : []))];
    return 'source' in resolved && columns.some((c) => used(c, resolved.source));
  });
  const inJoins = joins.some((group) => group.columns.some((c) => used(c.column, group.source)));
  return inScans || inJoins ? { ...uses, used: uses.used, paddedConstant: uses.paddedConstant, varchar: true } : uses;
}
