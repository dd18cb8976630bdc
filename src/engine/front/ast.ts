/**
 * Helpers over libpg-query's JSON syntax trees, shared by the binder, the planners and the
 * rewriters. Nodes are wrapped objects ({SelectStmt: {...}}); a key starting with a capital
 * letter names a node kind, and `walk` hands each visitor the node typed by its kind
 * (@pgsql/types), so `if (kind === 'RangeVar') node.relname` is checked by the compiler.
 */
import type { Node } from '@pgsql/types';

export type Json = Record<string, unknown>;

export const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

export const lower = (text: string) => text.toLowerCase();

/** The parts of a name list (funcname, ColumnRef fields, type names); `*` for A_Star. */
export const fieldNames = (list: unknown): string[] =>
  Array.isArray(list) ? list.map((item: Json) => (isObject(item?.String) ? String(item.String.sval) : '*')) : [];

/** A node kind of the parse tree, and the node it names. */
type KeysOfUnion<T> = T extends unknown ? keyof T : never;
export type NodeKind = KeysOfUnion<Node>;
export type NodeOf<K extends NodeKind> = Extract<Node, Record<K, unknown>>[K];
/** `[kind, node]` of every kind: narrowing on `kind` types `node`. */
export type KindAndNode = { [K in NodeKind]: [kind: K, node: NodeOf<K>] }[NodeKind];

/** Calls `visit(kind, node)` for every node of the tree, depth first. */
export function walk(value: unknown, visit: (...args: KindAndNode) => void): void {
  if (Array.isArray(value)) {
    for (const item of value) walk(item, visit);
    return;
  }
  if (!isObject(value)) return;
  for (const [key, child] of Object.entries(value)) {
    if (isObject(child) && /^[A-Z]/.test(key)) (visit as (kind: string, node: Json) => void)(key, child);
    walk(child, visit);
  }
}

/** True when `test` holds for every node of the tree (stops at the first that fails). */
export function everyNode(value: unknown, test: (...args: KindAndNode) => boolean): boolean {
  if (Array.isArray(value)) return value.every((item) => everyNode(item, test));
  if (!isObject(value)) return true;
  for (const [key, child] of Object.entries(value)) {
    if (isObject(child) && /^[A-Z]/.test(key) && !(test as (kind: string, node: Json) => boolean)(key, child)) return false;
    if (!everyNode(child, test)) return false;
  }
  return true;
}

/** Whether the tree holds a node of `kind`. */
export const contains = (value: unknown, kind: NodeKind): boolean => !everyNode(value, (...[key]) => key !== kind);

/** The AND-ed parts of a condition (a condition without AND is its own one part). */
export function conjuncts(node: unknown): unknown[] {
  if (!isObject(node)) return [];
  const bool = node.BoolExpr;
  if (isObject(bool) && bool.boolop === 'AND_EXPR') return (bool.args as unknown[]).flatMap(conjuncts);
  return [node];
}

/**
 * What an ORDER BY item sorts by: a position (ORDER BY 2) or the name of an output column
 * (ORDER BY total, which in PostgreSQL means the output column even where a table has a column
 * of that name) is the select-list expression; anything else is itself.
 */
export function sortTarget(node: unknown, targetList: unknown): unknown {
  const targets = (Array.isArray(targetList) ? targetList : []) as Json[];
  const constant = isObject(node) && isObject(node.A_Const) ? node.A_Const : null;
  if (constant && isObject(constant.ival)) {
    const position = Number(constant.ival.ival ?? 0);
    return (targets[position - 1]?.ResTarget as Json | undefined)?.val ?? node;
  }
  const fields = isObject(node) && isObject(node.ColumnRef) ? fieldNames(node.ColumnRef.fields) : [];
  if (fields.length === 1) {
    const named = targets.find(
      (t) => isObject(t.ResTarget) && typeof t.ResTarget.name === 'string' && lower(t.ResTarget.name) === lower(fields[0]!),
    );
    if (named) return (named.ResTarget as Json).val;
  }
  return node;
}
