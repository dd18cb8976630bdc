/**
 * Conditions derived through equi-joins (equivalence classes): with `o.custkey = c.custkey` and
 * `c.custkey < 100` holding for every row of the answer, `o.custkey < 100` holds too, so it may
 * be offered to the source of `o` as well (TPC-H's `n1`/`n2` nation scans, a key range reaching
 * both sides of a join). The statement itself is unchanged: a derived condition only narrows what
 * a source sends, and each is implied by the statement's own conditions.
 *
 * Only facts that hold for every row of the answer are used: the conjuncts of WHERE and of the
 * ON of inner joins, over tables that no outer join may fill with NULLs (the caller passes those
 * tables). Only conditions on one column compared with constants are carried (never IS NULL:
 * an equi-join already excludes NULL, and a column that may be NULL on one side only is not the
 * other's), and only between columns of one kind (numbers, text, dates), as equi-joins are noted.
 */
import type { ColumnDef } from '../../catalog/types.js';
import type { Node } from '@pgsql/types';
import { asKind, exprIs, fieldNames, walk } from '../tree/ast.js';

/** A column reference as resolved in the SELECT's FROM: the alias of its table and the column. */
export interface ResolvedRef {
  alias: string;
  column: ColumnDef;
}

/** A condition for the table under `alias`, derived from one on another table's column. */
export interface DerivedCondition {
  alias: string;
  condition: Node;
}

/**
 * The conditions `facts` imply for other tables through their equi-joins. `resolve` resolves a
 * reference to a column of a table the facts hold for (null for anything else); `family` is the
 * kind a column's values compare as (null: never carried).
 */
export function deriveThroughEquiJoins(
  facts: readonly Node[],
  resolve: (fields: string[]) => ResolvedRef | null,
  family: (type: string) => string | null,
): DerivedCondition[] {
  const classes = new EquivalenceClasses();
  for (const fact of facts) {
    const pair = equiJoin(fact, resolve);
    if (pair && family(pair[0].column.type) !== null && family(pair[0].column.type) === family(pair[1].column.type)) classes.join(...pair);
  }
  if (classes.isEmpty()) return [];
  const derived: DerivedCondition[] = [];
  const seen = new Set<string>();
  for (const fact of facts) {
    const ref = singleColumn(fact);
    const resolved = ref && resolve(fieldNames(ref.fields));
    if (!ref || !resolved || !comparesWithConstants(fact)) continue;
    for (const other of classes.membersOf(resolved)) {
      if (other.alias === resolved.alias) continue;
      const condition = withColumn(fact, ref, other);
      const key = `${other.alias}\u0000${JSON.stringify(condition)}`;
      if (seen.has(key)) continue;
      seen.add(key);
      derived.push({ alias: other.alias, condition });
    }
  }
  return derived;
}

/** `a.x = b.y` of two different tables' columns. */
function equiJoin(fact: Node, resolve: (fields: string[]) => ResolvedRef | null): [ResolvedRef, ResolvedRef] | null {
  const expr = asKind(fact, 'A_Expr');
  if (!expr || !exprIs(expr, 'AEXPR_OP') || fieldNames(expr.name).join('.') !== '=') return null;
  const side = (node: Node | undefined) => {
    const ref = asKind(node, 'ColumnRef');
    return ref ? resolve(fieldNames(ref.fields)) : null;
  };
  const left = side(expr.lexpr);
  const right = side(expr.rexpr);
  return left && right && left.alias !== right.alias ? [left, right] : null;
}

/** The one column reference of a condition; null when it has none or several. */
function singleColumn(fact: Node): { fields?: Node[] } | null {
  let found: { fields?: Node[] } | null = null;
  let count = 0;
  walk(fact, (nodeType, node) => {
    if (nodeType === 'ColumnRef') {
      found = node;
      count++;
    }
  });
  return count === 1 ? found : null;
}

/** A comparison, IN list or BETWEEN of the column with constants (what sources are offered: connectors/sql/predicate.ts decides the rest). */
function comparesWithConstants(fact: Node): boolean {
  const expr = asKind(fact, 'A_Expr');
  if (!expr) return false;
  const comparison = exprIs(expr, 'AEXPR_OP') && ['=', '<>', '!=', '<', '<=', '>', '>='].includes(fieldNames(expr.name).join('.'));
  const listed = exprIs(expr, 'AEXPR_IN') || exprIs(expr, 'AEXPR_BETWEEN') || exprIs(expr, 'AEXPR_NOT_BETWEEN');
  if (!comparison && !listed) return false;
  // Nothing but the column, constants and casts of constants (no functions, no subqueries).
  let plain = true;
  walk(fact, (...[nodeType]) => {
    if (!['A_Expr', 'ColumnRef', 'A_Const', 'TypeCast', 'TypeName', 'List', 'String', 'Integer', 'Float'].includes(nodeType)) plain = false;
  });
  return plain && asKind(expr.lexpr, 'ColumnRef') !== undefined;
}

/** A copy of `fact` with its column reference naming `other` (alias.column). */
function withColumn(fact: Node, ref: { fields?: Node[] }, other: ResolvedRef): Node {
  const original = ref.fields;
  ref.fields = [{ String: { sval: other.alias } }, { String: { sval: other.column.name } }];
  try {
    return structuredClone(fact);
  } finally {
    ref.fields = original;
  }
}

/** Columns known equal, as classes (union-find on "alias.column"). */
class EquivalenceClasses {
  private readonly parent = new Map<string, string>();
  private readonly refs = new Map<string, ResolvedRef>();

  isEmpty(): boolean {
    return this.parent.size === 0;
  }

  join(a: ResolvedRef, b: ResolvedRef): void {
    const rootA = this.root(this.add(a));
    const rootB = this.root(this.add(b));
    if (rootA !== rootB) this.parent.set(rootA, rootB);
  }

  /** Every column in the class of `ref` (itself included); none when it is in no class. */
  membersOf(ref: ResolvedRef): ResolvedRef[] {
    const key = keyOf(ref);
    if (!this.parent.has(key)) return [];
    const root = this.root(key);
    return [...this.parent.keys()].filter((k) => this.root(k) === root).map((k) => this.refs.get(k)!);
  }

  private add(ref: ResolvedRef): string {
    const key = keyOf(ref);
    if (!this.parent.has(key)) {
      this.parent.set(key, key);
      this.refs.set(key, ref);
    }
    return key;
  }

  private root(key: string): string {
    let current = key;
    while (this.parent.get(current) !== current) current = this.parent.get(current)!;
    return current;
  }
}

const keyOf = (ref: ResolvedRef) => `${ref.alias}\u0000${ref.column.name.toLowerCase()}`;
