/**
 * Every value the engine builds is bounded (configuration `valueLimit`). The engine's memory
 * limit does not cover the values of an expression, and a value being built cannot be
 * interrupted, so a statement of a few bytes could otherwise take the whole process
 * (`repeat('x', 600000000)`, a split of a huge text into a list). This pass, the last over the
 * engine's tree, puts the engine's calls in the macros of runtime/value-macros.ts:
 *  - functions whose result size follows from their arguments (repeat, lpad, rpad, replace,
 *    regexp_replace, splits into lists, array_to_string, a series as a list) are checked before
 *    they build the value;
 *  - functions that join or widen their inputs (||, concat, translate, hex, to_json, list
 *    concatenation, ...) are checked on their result, once per chain (`a || b || c`), so that no
 *    chain of them (through subqueries and CTEs) doubles a value past the limit.
 * Tables functions of FROM stream their rows and are left as they are; their arguments are not.
 */
import type { FuncCall, Node } from '@pgsql/types';
import { asKind, mapChildren, nameNode, exprIs } from '../tree/ast.js';
import { hasFact } from '../tree/functions.js';
import { calledName, literalText, notAsPostgres, stringConst } from '../tree/syntax-nodes.js';
import { SPLIT_MARKING } from './regex-split.js';

const CONCATENATION = '||';

/**
 * How many checks the statement has: each check's share of the batch budget is 1/g. One
 * constant node that every check of a statement refers to, its value set once all are written.
 */
let checks = { count: 0, node: { A_Const: { ival: { ival: 1 } } } };

/** A call of a checking macro (runtime/value-macros.ts); the statement's count of checks goes last. */
const macro = (name: string, args: Node[]): Node => {
  checks.count++;
  return { FuncCall: { funcname: [nameNode(name)], args: [...args, checks.node], funcformat: 'COERCE_EXPLICIT_CALL' } };
};

const bounded = (value: Node, fn: string): Node => macro('vdb_bounded', [value, stringConst(fn)]);

/** The function a regexp_replace is reported as: regexp_split_to_array is written as one that marks its matches (regex-split.ts). */
const replaceNamed = (replacement: Node): string =>
  literalText(replacement) === SPLIT_MARKING ? 'regexp_split_to_array' : 'regexp_replace';

/** The call with its size checked before it is built, or null when `fc` is not such a call. */
function checkedBeforeBuilt(fc: FuncCall, args: Node[]): Node | null {
  const name = calledName(fc);
  if (fc.over || fc.agg_star || fc.agg_order || fc.agg_filter) return null;
  switch (name) {
    case 'repeat':
      return args.length === 2 ? macro('vdb_repeat', args) : null;
    case 'lpad':
    case 'rpad':
      return args.length >= 2
        ? { FuncCall: { ...fc, args: [args[0]!, macro('vdb_pad_width', [args[1]!, stringConst(name)]), ...args.slice(2)] } }
        : null;
    case 'replace':
      return args.length === 3 ? macro('vdb_replace', args) : null;
    case 'regexp_replace':
      if (args.length < 3) return null;
      if (!isSimple(args[2])) {
        throw notAsPostgres(
          'regexp_replace() with a replacement computed by an expression',
          'Give the replacement as a constant or a column.',
        );
      }
      // The replacement is written twice (the check and the call): a constant or a column only.
      return {
        FuncCall: { ...fc, args: [macro('vdb_regexp_text', [args[0]!, args[2]!, stringConst(replaceNamed(args[2]!))]), ...args.slice(1)] },
      };
    case 'string_to_array':
    case 'string_split':
    case 'str_split':
    case 'regexp_split_to_array':
    case 'string_split_regex':
      return args.length >= 1
        ? { FuncCall: { ...fc, args: [macro('vdb_split_input', [args[0]!, stringConst(name)]), ...args.slice(1)] } }
        : null;
    case 'array_to_string':
      // The engine takes only a constant delimiter, which is written twice (the check and the call).
      return args.length === 2 ? bounded({ FuncCall: { ...fc, args: [macro('vdb_join_input', args), args[1]!] } }, name) : null;
    case 'generate_series':
    case 'range':
      if (args.length === 2) return macro('vdb_series2', args);
      return args.length === 3 ? macro('vdb_series', args) : null;
    default:
      return null;
  }
}

/** A constant, a column or a parameter (possibly cast): cheap and small to write twice. */
function isSimple(node: Node | undefined): boolean {
  const typeCast = asKind(node, 'TypeCast');
  if (typeCast) return isSimple(typeCast.arg);
  return asKind(node, 'A_Const') !== undefined || asKind(node, 'ColumnRef') !== undefined || asKind(node, 'ParamRef') !== undefined;
}

const isConcatenation = (node: Node | undefined): boolean => {
  const expr = asKind(node, 'A_Expr');
  return expr !== undefined && exprIs(expr, 'AEXPR_OP') && asKind(expr.name?.[expr.name.length - 1], 'String')?.sval === CONCATENATION;
};

/** `node` and its children with the checks; `inChain`: its parent is a concatenation it continues. */
function bound(node: Node, inChain = false): Node {
  const rangeFunction = asKind(node, 'RangeFunction');
  if (rangeFunction) {
    // A table function streams its rows: only what its arguments compute is bounded.
    const functions = (rangeFunction.functions ?? []).map((item) => {
      const list = asKind(item, 'List');
      const items = (list?.items ?? [item]).map((part) => {
        const fc = asKind(part, 'FuncCall');
        return fc ? { FuncCall: { ...fc, args: (fc.args ?? []).map((arg) => bound(arg)) } } : boundTree(part);
      });
      return list ? { List: { ...list, items } } : items[0]!;
    });
    return { RangeFunction: { ...rangeFunction, functions } };
  }
  const fc = asKind(node, 'FuncCall');
  if (fc) {
    const args = (fc.args ?? []).map((arg) => bound(arg));
    const checked = checkedBeforeBuilt(fc, args);
    if (checked) return checked;
    const { args: _args, ...rest } = fc;
    const copy: Node = { FuncCall: { ...mapChildren(rest, (child) => bound(child)), ...(fc.args ? { args } : {}) } };
    return hasFact(calledName(fc), 'widensValues') && !fc.over ? bounded(copy, calledName(fc)) : copy;
  }
  if (isConcatenation(node)) {
    const expr = asKind(node, 'A_Expr')!;
    const chained: Node = {
      A_Expr: { ...expr, lexpr: expr.lexpr && bound(expr.lexpr, true), rexpr: expr.rexpr && bound(expr.rexpr, true) },
    };
    return inChain ? chained : bounded(chained, CONCATENATION);
  }
  return mapChildren(node, (child) => bound(child)) as Node;
}

const boundTree = (node: Node): Node => bound(node);

/** A copy of an engine tree (a parse result or any part of it) with every built value bounded. */
export function boundValues<T>(tree: T): T {
  checks = { count: 0, node: { A_Const: { ival: { ival: 1 } } } };
  const result = mapChildren(tree as object, (node) => bound(node)) as T;
  checks.node.A_Const.ival.ival = Math.max(1, checks.count);
  return result;
}
