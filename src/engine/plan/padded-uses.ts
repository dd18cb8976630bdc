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
import { paddedChar, sourceTypeUnknown } from '../../connectors/kinds.js';
import type { JoinGroup } from './join-pushdown.js';
import type { BoundTable } from '../access/bind.js';
import type { ScanPlan } from './scans.js';
import { asKind, fieldNames, lower, statementOf, walk } from '../tree/ast.js';

/** A column recorded as char(n) (one whose source type is not known may be text: never stripped). */
const knownChar = (column: ColumnDef, source: { kind: string }) => paddedChar(column, source) && !sourceTypeUnknown(column);

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
  /**
   * The column references the engine writes as `rtrim(ref, ' ')` (set by usedWithChars): a
   * char(n) column's, where PostgreSQL reads its value without the padding (see STRIPPED).
   */
  stripped?: WeakSet<object>;
}

/** Every column used (uses unknown). */
export const ALL_USED: PaddedUses = { used: () => true, paddedConstant: () => false };

/** No column used beyond showing it (rows that only go elsewhere as they are). */
export const NONE_USED: PaddedUses = { used: () => false, paddedConstant: () => false };

/** The uses of columns in `tree` (see the module comment), as a statement the engine writes; worked out when first asked. */
export function paddedUses(tree: ParseResult): StatementUses {
  let found: Found | undefined;
  const ofTree = () => (found ??= usesOf(tree));
  return {
    used: (column) => ofTree().everything || ofTree().names.has(lower(column)),
    paddedConstant: () => ofTree().constant,
    strippable: (column) => ofTree().strippable.get(lower(column)) ?? [],
    aliased: (column) => ofTree().aliased.has(lower(column)),
    grouped: (column) => ofTree().grouped.has(lower(column)),
  };
}

/** A statement's uses, with the references whose value PostgreSQL reads without padding (see STRIPPED). */
export interface StatementUses extends PaddedUses {
  /** The references of this name where PostgreSQL reads a char(n) without its padding: not among `used` unless stripped by the engine. */
  strippable(column: string): object[];
  /** Whether a select list names a column so (`AS code`): a reference of the name may be to it. */
  aliased(column: string): boolean;
  /** Whether GROUP BY has the column as a key (not among `used`). */
  grouped(column: string): boolean;
}

/** The names a condition (a row condition, which the engine runs as it is) refers to, or every name where it refers to a whole row or `*`. */
export function conditionUses(condition: Node): PaddedUses {
  const uses = paddedUses({ stmts: [{ stmt: { SelectStmt: { whereClause: condition } } }] } as ParseResult);
  return {
    used: (column) => uses.used(column) || uses.strippable(column).length > 0 || uses.grouped(column),
    paddedConstant: uses.paddedConstant,
  };
}

interface Found {
  names: Set<string>;
  everything: boolean;
  constant: boolean;
  /** References where PostgreSQL reads a char(n) without its padding, by name. */
  strippable: Map<string, object[]>;
  /** Names select lists give their columns. */
  aliased: Set<string>;
  /** Names of GROUP BY keys (not counted in `names`). */
  grouped: Set<string>;
}

/**
 * Functions of text: PostgreSQL casts a char(n) argument to text, which drops the padding
 * (`length('a'::char(3))` is 1, `upper` gives `'A'`).
 */
const TEXT_FUNCTIONS = new Set([
  'length',
  'char_length',
  'character_length',
  'upper',
  'lower',
  'initcap',
  'substr',
  'substring',
  'left',
  'right',
  'btrim',
  'ltrim',
  'rtrim',
  'replace',
  'strpos',
  'position',
  'starts_with',
  'split_part',
  'reverse',
  'repeat',
  'lpad',
  'rpad',
  'translate',
  'md5',
  'ascii',
  'string_agg',
]);

/** Functions and operators that read a char(n) with its padding, as the engine holds it (`octet_length`, `concat`, `LIKE`, `~`). */
const PADDED_FUNCTIONS = new Set(['octet_length', 'concat', 'concat_ws', 'format']);
const COMPARISONS = new Set(['=', '<>', '!=', '<', '>', '<=', '>=']);
const REGEX = new Set(['~', '~*', '!~', '!~*']);
const CHAR_TYPES = new Set(['bpchar', 'char', 'character']);

/**
 * STRIPPED: where PostgreSQL reads a char(n) column's value without its padding, so that the
 * engine reads `rtrim(ref, ' ')` there: an operand of a comparison (joins, IN, BETWEEN, IS
 * DISTINCT FROM), of `||`, an argument of a function of text, a cast to another type than
 * char(n), an ORDER BY key (not of DISTINCT or a set operation, whose keys are output columns).
 * `found` gets them; `asIs` the references read with the padding (LIKE, `~`, octet_length, concat);
 * `grouped` the GROUP BY keys and count(DISTINCT ...) arguments (a char(n) of a fixed length
 * groups its padded values as PostgreSQL groups them without the padding: all are padded to the
 * same length); usesOf adds the columns of the outermost SELECT DISTINCT.
 */
function strippingContexts(tree: unknown, found: Set<object>, asIs: Set<object>, grouped: Set<object>): void {
  const ref = (node: Node | undefined, into: Set<object>) => {
    const columnRef = asKind(node, 'ColumnRef');
    if (columnRef) into.add(columnRef);
  };
  const list = (node: Node | undefined, into: Set<object>) => {
    const items = asKind(node, 'List')?.items;
    if (items) for (const item of items) ref(item, into);
    else ref(node, into);
  };
  // ORDER BY keys of DISTINCT and set operations: output columns, left as they are.
  const outputKeys = new Set<object>();
  walk(tree, (nodeType, node) => {
    if (nodeType === 'A_Expr') {
      const operator = fieldNames(node.name).join('');
      const kind = node.kind;
      if (
        (kind === 'AEXPR_OP' && (COMPARISONS.has(operator) || operator === '||')) ||
        kind === 'AEXPR_DISTINCT' ||
        kind === 'AEXPR_NOT_DISTINCT'
      ) {
        ref(node.lexpr, found);
        ref(node.rexpr, found);
      } else if (kind === 'AEXPR_IN' || kind === 'AEXPR_BETWEEN' || kind === 'AEXPR_NOT_BETWEEN') {
        ref(node.lexpr, found);
        list(node.rexpr, found);
      } else if (kind === 'AEXPR_LIKE' || kind === 'AEXPR_ILIKE' || (kind === 'AEXPR_OP' && REGEX.has(operator))) {
        ref(node.lexpr, asIs);
      }
    } else if (nodeType === 'FuncCall' && fieldNames(node.funcname).join('.').toLowerCase() === 'count') {
      // count(code) counts values whatever they are; count(DISTINCT code) tells them apart by equality only.
      for (const arg of node.args ?? []) ref(arg, node.agg_distinct ? grouped : asIs);
    } else if (nodeType === 'FuncCall' && !node.over && !node.agg_star && !node.func_variadic) {
      const name = fieldNames(node.funcname)
        .join('.')
        .toLowerCase()
        .replace(/^pg_catalog\./, '');
      if (TEXT_FUNCTIONS.has(name)) for (const arg of node.args ?? []) ref(arg, found);
      if (PADDED_FUNCTIONS.has(name)) for (const arg of node.args ?? []) ref(arg, asIs);
    } else if (nodeType === 'TypeCast') {
      const type = fieldNames(node.typeName?.names).map(lower);
      if (!CHAR_TYPES.has(type[type.length - 1] ?? '') && !node.typeName?.arrayBounds) ref(node.arg, found);
    } else if (nodeType === 'SubLink' && (node.subLinkType === 'ANY_SUBLINK' || node.subLinkType === 'ALL_SUBLINK')) {
      // x IN (SELECT code ...), x < ALL (SELECT code ...): the subquery's one column is compared.
      const operator = fieldNames(node.operName).join('');
      const inner = asKind(node.subselect, 'SelectStmt');
      if (
        (operator === '' || COMPARISONS.has(operator)) &&
        inner &&
        (!inner.op || inner.op === 'SETOP_NONE') &&
        inner.targetList?.length === 1
      )
        ref(asKind(inner.targetList[0], 'ResTarget')?.val, found);
      ref(node.testexpr, found);
    } else if (nodeType === 'SelectStmt') {
      for (const key of node.groupClause ?? []) ref(key, grouped);
      if (node.distinctClause || (node.op && node.op !== 'SETOP_NONE'))
        for (const item of node.sortClause ?? []) outputKeys.add(asKind(item, 'SortBy') ?? item);
    } else if (nodeType === 'SortBy' && !outputKeys.has(node)) {
      ref(node.node, found);
    }
  });
}

function usesOf(tree: ParseResult): Found {
  const names = new Set<string>();
  let everything = false;
  let constant = false;
  const aliases = new Set<string>();
  const aliased = new Set<string>();
  const stripping = new Set<object>();
  const asIs = new Set<object>();
  const groupKeys = new Set<object>();
  strippingContexts(tree, stripping, asIs, groupKeys);
  walk(tree, (nodeType, node) => {
    if (nodeType === 'ResTarget' && node.name) aliased.add(lower(String(node.name)));
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
  // SELECT DISTINCT code (the outermost, not ordered): its columns are told apart by equality, and shown.
  if (select && (!select.op || select.op === 'SETOP_NONE') && select.distinctClause && !select.sortClause) {
    for (const item of [...select.distinctClause, ...(select.targetList ?? []).map((t) => asKind(t, 'ResTarget')?.val)]) {
      const columnRef = asKind(item, 'ColumnRef');
      if (columnRef && !stripping.has(columnRef)) groupKeys.add(columnRef);
    }
  }
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

  const strippable = new Map<string, object[]>();
  const grouped = new Set<string>();
  walk(tree, (nodeType, node) => {
    if (nodeType === 'ResTarget' && bare.has(node)) return 'skip';
    if (nodeType !== 'ColumnRef') return;
    const fields = fieldNames(node.fields);
    const last = fields[fields.length - 1] ?? '*';
    if (last === '*' || (fields.length === 1 && aliases.has(lower(last)))) everything = true;
    else if (stripping.has(node)) strippable.set(lower(last), [...(strippable.get(lower(last)) ?? []), node]);
    else if (groupKeys.has(node)) grouped.add(lower(last));
    else if (!asIs.has(node)) names.add(lower(last));
  });
  return { names, everything, constant, strippable, aliased, grouped };
}

/**
 * The statement's uses; where it uses a char(n) column beyond showing it, PostgreSQL's varchar
 * columns it uses are checked too (PostgreSQL compares them with a char(n) without trailing spaces).
 */
export function usedWithChars(
  scans: Iterable<ScanPlan>,
  joins: readonly JoinGroup[],
  uses: StatementUses,
  tables: readonly BoundTable[],
): PaddedUses {
  // Every column the statement reads, with its load name where a join group renames it.
  const read: Array<{ column: ColumnDef; source: { kind: string }; names: string[]; char: boolean }> = [];
  for (const plan of scans) {
    const resolved = plan.bound.resolved;
    const source = 'source' in resolved ? resolved.source : null;
    const columns = [...plan.columns, ...(plan.aggregates ?? []).flatMap((a) => (a.column ? [a.column] : []))];
    for (const column of columns)
      read.push({ column, source: source ?? { kind: '' }, names: [column.name], char: source !== null && knownChar(column, source) });
  }
  for (const group of joins)
    for (const c of group.columns)
      read.push({ column: c.column, source: group.source, names: [c.column.name, c.name], char: knownChar(c.column, group.source) });
  // A name the engine strips is a char(n) column's alone: of no other column of the statement's
  // tables, no select list's name; and none where a string constant ending with a space or a
  // cast to varchar is about (PostgreSQL compares those with a char(n) as char(n)): refused then.
  const others = new Set<string>();
  for (const table of tables)
    for (const column of table.resolved.table.columns) {
      const source = 'source' in table.resolved ? table.resolved.source : null;
      if (source === null || !knownChar(column, source)) others.add(lower(column.name));
    }
  for (const r of read) if (!r.char) for (const name of r.names) others.add(lower(name));
  const strips = (name: string) =>
    !uses.paddedConstant() && !others.has(lower(name)) && !uses.aliased(name) && uses.strippable(name).length > 0;
  const stripped = new WeakSet<object>();
  for (const r of read)
    if (r.char) for (const name of r.names) if (strips(name)) for (const ref of uses.strippable(name)) stripped.add(ref);
  // GROUP BY keys of a char(n) of fixed length group as PostgreSQL's; of any other column they are used.
  const fixed = (name: string) =>
    !others.has(lower(name)) &&
    read.some((r) => r.char && r.names.some((n) => lower(n) === lower(name)) && /\(\d+\)$/.test(r.column.sourceType ?? ''));
  const used = (column: string) =>
    uses.used(column) || (uses.strippable(column).length > 0 && !strips(column)) || (uses.grouped(column) && !fixed(column));
  const mentioned = read.some((r) => paddedChar(r.column, r.source) && r.names.some((name) => used(name) || strips(name)));
  return { used, paddedConstant: uses.paddedConstant, stripped, ...(mentioned ? { varchar: true } : {}) };
}
