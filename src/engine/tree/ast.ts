/**
 * Helpers over libpg-query's syntax trees, shared by the binder, the planners and the
 * rewriters. Nodes are typed by @pgsql/types: a `Node` is a wrapped object ({SelectStmt: {...}})
 * whose one key names its kind; narrow it with `'SelectStmt' in node` or `asKind(node,
 * 'SelectStmt')`. `walk` hands each visitor the node typed by its kind, so
 * `if (nodeType === 'RangeVar') node.relname` is checked by the compiler.
 */
import type { A_Expr, A_Expr_Kind, Node, ParseResult, RangeVar } from '@pgsql/types';

/**
 * Any object of a tree, before it is known which node or field it is. Only for the code that
 * walks every field of a tree whatever it holds: the walkers below (`walk`, `everyNode`,
 * `replaceNodes`, `mapTree`, `mapChildren`, `mapTreeUp`) and the FROM-scope walk of access.ts.
 */
export type Json = Record<string, unknown>;

export const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Whether a value is a node as the parser wraps it: one key, naming its kind, over an object. */
export function isNode(value: unknown): value is Node {
  if (!isObject(value)) return false;
  const keys = Object.keys(value);
  return keys.length === 1 && /^[A-Z]/.test(keys[0]!) && isObject(value[keys[0]!]);
}

export const lower = (text: string) => text.toLowerCase();

/** The parts of a name list (funcname, ColumnRef fields, type names); `*` for A_Star. */
export const fieldNames = (list: unknown): string[] =>
  Array.isArray(list) ? list.map((item: unknown) => (isObject(item) && isObject(item.String) ? String(item.String.sval) : '*')) : [];

/** A node kind of the parse tree, and the node it names. */
type KeysOfUnion<T> = T extends unknown ? keyof T : never;
export type NodeKind = KeysOfUnion<Node>;
export type NodeOf<K extends NodeKind> = Extract<Node, Record<K, unknown>>[K];
/** `[nodeType, node]` of every node type: narrowing on `nodeType` types `node`. */
export type KindAndNode = { [K in NodeKind]: [nodeType: K, node: NodeOf<K>] }[NodeKind];

/** The kind of a node: 'ColumnRef' for `{ColumnRef: {...}}`. */
export const nodeKind = (node: Node): NodeKind => Object.keys(node)[0] as NodeKind;

/** The body of `node` when it is of `kind`, else undefined: `asKind(node, 'ColumnRef')?.fields`. */
export function asKind<K extends NodeKind>(node: Node | undefined, kind: K): NodeOf<K> | undefined {
  return node !== undefined && kind in node ? ((node as Partial<Record<NodeKind, unknown>>)[kind] as NodeOf<K>) : undefined;
}

/** The statement of a one-statement tree ({SelectStmt: ...}, {InsertStmt: ...}, ...). */
export const statementOf = (tree: ParseResult): Node | undefined => tree.stmts?.[0]?.stmt;

/** A table reference's name in its statement: its alias or else its name, lower case. */
export const rangeAlias = (range: RangeVar): string => lower(String(range.alias?.aliasname ?? range.relname));

/** `{String: {sval}}`: a part of a name list. */
export const nameNode = (sval: string): Node => ({ String: { sval } });

/** Turns `node` into `by` in place: whatever holds `node` (a parent, a set) then holds the new node. */
export function becomes(node: Node, by: Node): void {
  const target: Json = node;
  for (const key of Object.keys(target)) delete target[key];
  Object.assign(target, by);
}

/** What a visitor of `walk` may answer: 'skip' leaves the node's children out. */
export type WalkStep = void | 'skip';

/**
 * Calls `visit(nodeType, node)` for every node of the tree, depth first, parents before children.
 * Where `visit` answers 'skip', the children of that node are not visited.
 */
export function walk(value: unknown, visit: (...args: KindAndNode) => WalkStep): void {
  if (Array.isArray(value)) {
    for (const item of value) walk(item, visit);
    return;
  }
  if (!isObject(value)) return;
  for (const [key, child] of Object.entries(value)) {
    if (isObject(child) && /^[A-Z]/.test(key) && (visit as (kind: string, node: Json) => WalkStep)(key, child) === 'skip') continue;
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

/**
 * Replaces nodes below `value` in place, depth first: where `replace` answers a node, that node
 * takes the place of the one it was given and is not walked into (answering the node itself
 * keeps it and skips its children); where it answers undefined, the node's children are walked.
 * `value` itself is never replaced (see `replaceNodes`).
 */
export function replaceNodesBelow(value: unknown, replace: (node: Node) => Node | undefined): void {
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      const replaced = isNode(item) ? replace(item) : undefined;
      if (replaced) value[i] = replaced;
      else replaceNodesBelow(item, replace);
    });
    return;
  }
  if (!isObject(value)) return;
  for (const [key, child] of Object.entries(value)) {
    const replaced = isNode(child) ? replace(child) : undefined;
    if (replaced) value[key] = replaced;
    else replaceNodesBelow(child, replace);
  }
}

/** `replaceNodesBelow` from a node that may itself be replaced: returns the node or its replacement. */
export function replaceNodes(node: Node, replace: (node: Node) => Node | undefined): Node {
  const replaced = replace(node);
  if (replaced) return replaced;
  replaceNodesBelow(node, replace);
  return node;
}

/**
 * A copy of `value` (a tree, a list, a field of a node) in which each node is `map(node)`; where
 * `map` answers undefined, the node is copied with its fields copied the same way. What `map`
 * answers is taken as it is (it maps the children it wants mapped). `value` is left unchanged.
 */
export function mapTree<T>(value: T, map: (node: Node) => Node | undefined): T {
  if (Array.isArray(value)) return value.map((item: unknown) => mapTree(item, map)) as T;
  if (!isObject(value)) return value;
  const mapped = isNode(value) ? map(value) : undefined;
  if (mapped) return mapped as T;
  return mapChildren(value, map);
}

/** A copy of `node` (or of any object of a tree) whose fields are copied by `mapTree`; `node` itself is not given to `map`. */
export function mapChildren<T extends object>(node: T, map: (node: Node) => Node | undefined): T {
  return Object.fromEntries(Object.entries(node).map(([key, child]) => [key, mapTree(child, map)])) as T;
}

/**
 * `value` with each node replaced by `map(node)`, children before their parents (`map` sees the
 * node with its children already mapped). Copies only what changed: a part in which `map`
 * changed nothing is the same object. `value` is left unchanged.
 */
export function mapTreeUp<T>(value: T, map: (node: Node) => Node): T {
  if (Array.isArray(value)) {
    const items = value.map((item: unknown) => mapTreeUp(item, map));
    return (items.some((item, i) => item !== value[i]) ? items : value) as T;
  }
  if (!isObject(value)) return value;
  let changed = false;
  const entries = Object.entries(value).map(([key, child]) => {
    const mapped = mapTreeUp(child, map);
    changed ||= mapped !== child;
    return [key, mapped];
  });
  const copy = changed ? Object.fromEntries(entries) : value;
  return (isNode(copy) ? map(copy) : copy) as T;
}

/** The AND-ed parts of a condition (a condition without AND is its own one part). */
export function conjuncts(node: Node | undefined): Node[] {
  if (!isObject(node)) return [];
  const bool = asKind(node, 'BoolExpr');
  if (bool?.boolop === 'AND_EXPR') return bool.args!.flatMap(conjuncts);
  return [node];
}

/**
 * What an ORDER BY item sorts by: a position (ORDER BY 2) or the name of an output column
 * (ORDER BY total, which in PostgreSQL means the output column even where a table has a column
 * of that name) is the select-list expression; anything else is itself.
 */
export function sortTarget(node: Node | undefined, targetList: Node[] | undefined): Node | undefined {
  const targets = (targetList ?? []).map((t) => asKind(t, 'ResTarget'));
  const constant = asKind(node, 'A_Const');
  if (constant && isObject(constant.ival)) {
    const position = Number(constant.ival.ival ?? 0);
    return targets[position - 1]?.val ?? node;
  }
  const fields = fieldNames(asKind(node, 'ColumnRef')?.fields);
  if (fields.length === 1) {
    const named = targets.find((t) => typeof t?.name === 'string' && lower(t.name) === lower(fields[0]!));
    if (named) return named.val;
  }
  return node;
}

/** Whether `expr` is an A_Expr of libpg-query's `which` (AEXPR_OP for `a + b`, AEXPR_IN, ...). */
export const exprIs = (expr: A_Expr | undefined, which: A_Expr_Kind): boolean => expr?.kind === which;
