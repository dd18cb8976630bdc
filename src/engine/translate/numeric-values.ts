/**
 * PostgreSQL's numeric results whose scale is chosen per value (n / 3, avg(i), stddev(n), sqrt(n),
 * x::numeric of a float or text, least(n, 5), lag(n, 1, 0), sign(n), and round(...) of those), in the select list of the
 * outermost SELECT: computed exactly by the engine's numeric macros (runtime/numeric-macros.ts)
 * and written as PostgreSQL writes them (results/json.ts reads the marked column).
 *
 * Whether PostgreSQL answers numeric depends on the operands' types, which the rewrite does not
 * know: the statement is first described with the operands appended to its select list (a probe),
 * then written with the types learned. A column the statement sorts, groups or de-duplicates by
 * is left as it was (refused where the engine cannot answer it), as is anything nested deeper.
 */
import type { DuckDBConnection, DuckDBType } from '@duckdb/node-api';
import { DuckDBTypeId } from '@duckdb/node-api';
import type { FuncCall, Node, ParseResult, ResTarget, SelectStmt } from '@pgsql/types';
import { describe, MAX_RESULT_COLUMNS } from '../../runtime/duckdb.js';
import { ApiError } from '../../errors.js';
import { UNCONSTRAINED_NUMERIC } from '../../catalog/types.js';
import { asKind, fieldNames, exprIs } from '../tree/ast.js';
import { hasFact } from '../tree/functions.js';
import { call, calledName, int, isIntegerConst, literalText, stringConst, written } from '../tree/syntax-nodes.js';

/** PostgreSQL's kind of a value: integer, numeric (with the engine's scale), float, or anything else. */
type Kind =
  | { family: 'int' }
  | { family: 'numeric'; scale: number }
  | { family: 'float'; single: boolean }
  | { family: 'text' }
  | { family: 'other' };

/** A leaf: a value the engine computes as it is, whose type the probe tells. */
interface Leaf {
  node: Node;
  /** The witness appended to the probe's select list: the leaf, or min(leaf) for an aggregate's argument. */
  witness: Node;
}

const ARITHMETIC = new Set(['+', '-', '*', '/']);
/** ceil and floor: scale 0 of a numeric. */
const FLOORS = new Set(['ceil', 'ceiling', 'floor']);
/** Functions PostgreSQL has for numeric and double precision only: of an integer, a double. */
const OF_FLOAT_OR_NUMERIC = new Set(['round', 'trunc', 'sign', 'sqrt', 'power', 'pow', ...FLOORS]);
/** Logarithms and exp of numeric, computed by runtime/numeric-logarithms.ts (log and log10 of one argument are log(10, x)). */
const LOGARITHMS = new Set(['ln', 'exp', 'log', 'log10']);
/** The largest whole exponent computed exactly (power(x, n) multiplies n times). */
const MAX_EXPONENT = 8;

/** power(x, n), pow(x, n) and x ^ n of a whole constant n: the base and n, else null. */
function wholePower(node: Node): { base: Node; exponent: number } | null {
  const fc = asKind(node, 'FuncCall');
  const expr = asKind(node, 'A_Expr');
  let base: Node | undefined;
  let exponent: Node | undefined;
  if (fc && !fc.over && !fc.agg_star && (calledName(fc) === 'power' || calledName(fc) === 'pow') && fc.args?.length === 2)
    [base, exponent] = fc.args;
  else if (expr && exprIs(expr, 'AEXPR_OP') && fieldNames(expr.name).join('') === '^') [base, exponent] = [expr.lexpr, expr.rexpr];
  if (!base || !isIntegerConst(exponent)) return null;
  const n = Number(literalText(exponent));
  return Math.abs(n) <= MAX_EXPONENT ? { base, exponent: n } : null;
}

/** power(x, y), pow(x, y) and x ^ y: the base and the exponent, else null. */
function anyPower(node: Node): [Node, Node] | null {
  const fc = asKind(node, 'FuncCall');
  if (fc && !fc.over && !fc.agg_star && (calledName(fc) === 'power' || calledName(fc) === 'pow') && fc.args?.length === 2)
    return [fc.args[0]!, fc.args[1]!];
  const expr = asKind(node, 'A_Expr');
  if (expr?.lexpr && expr.rexpr && exprIs(expr, 'AEXPR_OP') && fieldNames(expr.name).join('') === '^') return [expr.lexpr, expr.rexpr];
  return null;
}

/** `x::numeric` (no precision, scale or array bounds) of anything but a literal: its scale is each value's own. */
function unconstrainedCastArg(node: Node): Node | null {
  const cast = asKind(node, 'TypeCast');
  if (!cast?.arg || cast.typeName?.typmods || cast.typeName?.arrayBounds || literalText(cast.arg) !== null) return null;
  const names = fieldNames(cast.typeName?.names).filter((part) => part !== 'pg_catalog');
  return names.length === 1 && names[0]!.toLowerCase() === 'numeric' ? cast.arg : null;
}

const mark = (fc: { FuncCall: FuncCall }) => {
  written.add(fc.FuncCall);
  return fc;
};

/** The operand nodes of a supported expression (structure only); null for a leaf. */
function parts(node: Node): Node[] | null {
  const power = wholePower(node);
  if (power) return [power.base];
  const castArg = unconstrainedCastArg(node);
  if (castArg) return [castArg];
  const anyPowerOf = anyPower(node);
  if (anyPowerOf) return anyPowerOf;
  const expr = asKind(node, 'A_Expr');
  if (expr && exprIs(expr, 'AEXPR_OP') && ARITHMETIC.has(fieldNames(expr.name).join(''))) {
    if (!expr.lexpr) return fieldNames(expr.name).join('') === '-' && expr.rexpr ? [expr.rexpr] : null;
    return expr.rexpr ? [expr.lexpr, expr.rexpr] : null;
  }
  const fc = asKind(node, 'FuncCall');
  if (fc && !fc.agg_order && !fc.agg_within_group && !fc.agg_star && !fc.func_variadic) {
    const name = calledName(fc);
    const args = fc.args ?? [];
    if (hasFact(name, 'exactAverage') && args.length === 1) return []; // its argument is a leaf of its own
    if (fc.over) return (name === 'lag' || name === 'lead') && args.length === 3 ? [] : null;
    if (fc.agg_filter || fc.agg_distinct) return null;
    if ((name === 'round' || name === 'trunc') && (args.length === 1 || (args.length === 2 && isIntegerConst(args[1])))) return [args[0]!];
    if (FLOORS.has(name) && args.length === 1) return args;
    if ((name === 'abs' || name === 'sign' || name === 'sqrt') && args.length === 1) return args;
    if (LOGARITHMS.has(name) && (args.length === 1 || (name === 'log' && args.length === 2))) return args;
  }
  const minMax = asKind(node, 'MinMaxExpr');
  if (minMax?.args && minMax.args.length > 0) return minMax.args;
  const coalesce = asKind(node, 'CoalesceExpr');
  if (coalesce?.args && coalesce.args.length > 0) return coalesce.args;
  return null;
}

/**
 * Whether a target may hold a value whose scale PostgreSQL chooses per value (a division, an
 * average, a choice among values, sign): only those are probed; sums and products keep the
 * engine's own DECIMAL, which already answers as PostgreSQL does.
 */
function mayChooseScale(node: Node): boolean {
  const fc = asKind(node, 'FuncCall');
  const name = fc ? calledName(fc) : '';
  if (fc && (hasFact(name, 'exactAverage') || LOGARITHMS.has(name) || ['lag', 'lead', 'sign', 'sqrt'].includes(name))) return true;
  if (unconstrainedCastArg(node) || anyPower(node)) return true;
  const expr = asKind(node, 'A_Expr');
  if (expr && fieldNames(expr.name).join('') === '/') return true;
  if (asKind(node, 'MinMaxExpr') || asKind(node, 'CoalesceExpr')) return true;
  return (parts(node) ?? []).some(mayChooseScale);
}

/** The leaves of a target, with the witnesses that tell their types. */
function leavesOf(node: Node, leaves: Leaf[]): void {
  const fc = asKind(node, 'FuncCall');
  const name = fc ? calledName(fc) : '';
  if (fc && hasFact(name, 'exactAverage') && parts(node)?.length === 0) {
    const arg = fc.args![0]!;
    const witness = mark(call('min', [arg]));
    if (fc.over) witness.FuncCall.over = fc.over;
    leaves.push({ node: arg, witness });
    return;
  }
  if (fc && fc.over && (name === 'lag' || name === 'lead')) {
    const [value, offset] = fc.args as [Node, Node, Node];
    const lagged = mark(call(name, [value, offset]));
    lagged.FuncCall.over = fc.over;
    leaves.push({ node: value, witness: lagged }, { node: fc.args![2]!, witness: fc.args![2]! });
    return;
  }
  const inner = parts(node);
  if (inner === null) {
    leaves.push({ node, witness: node });
    return;
  }
  for (const part of inner) leavesOf(part, leaves);
}

function kindOfType(type: DuckDBType): Kind {
  switch (type.typeId) {
    case DuckDBTypeId.TINYINT:
    case DuckDBTypeId.SMALLINT:
    case DuckDBTypeId.INTEGER:
    case DuckDBTypeId.BIGINT:
    case DuckDBTypeId.HUGEINT:
      return { family: 'int' };
    case DuckDBTypeId.DECIMAL:
      // DECIMAL(38,10) is how a numeric without declared scale arrives (PostgreSQL keeps each
      // value's own scale there, the engine 10 digits): its PostgreSQL scale is not known.
      if (type.toString() === UNCONSTRAINED_NUMERIC) return { family: 'other' };
      return { family: 'numeric', scale: (type as unknown as { scale: number }).scale };
    case DuckDBTypeId.FLOAT:
      return { family: 'float', single: true };
    case DuckDBTypeId.DOUBLE:
      return { family: 'float', single: false };
    case DuckDBTypeId.VARCHAR:
      return { family: 'text' };
    default:
      return { family: 'other' };
  }
}

/** PostgreSQL's kind of operands combined (int and numeric give numeric; a float wins; else other). */
function combined(kinds: Kind[]): Kind {
  if (kinds.some((k) => k.family === 'other' || k.family === 'text')) return { family: 'other' };
  if (kinds.some((k) => k.family === 'float')) return { family: 'float', single: false };
  if (kinds.some((k) => k.family === 'numeric')) return { family: 'numeric', scale: -1 };
  return { family: 'int' };
}

const isExact = (k: Kind) => k.family === 'int' || k.family === 'numeric';
const scaleOf = (k: Kind) => (k.family === 'numeric' ? k.scale : 0);

/** A translation: the pair expression, PostgreSQL's kind, and whether a scale is chosen per value. */
interface Translated {
  pair: Node | null;
  kind: Kind;
  perValue: boolean;
}

class Translator {
  private next = 0;
  constructor(private readonly kinds: Kind[]) {}

  /** The leaf as a pair of the engine's numeric macros (its digits and its scale). */
  private leafPair(node: Node, kind: Kind): Node {
    if (kind.family === 'numeric') return mark(call('vdb_num', [mark(call('vdb_unscaled', [node])), int(kind.scale)]));
    return mark(call('vdb_num', [mark(call('vdb_hugeint', [node])), int(0)]));
  }

  private leaf(node: Node): Translated {
    const kind = this.kinds[this.next++]!;
    return { pair: isExact(kind) ? this.leafPair(node, kind) : null, kind, perValue: false };
  }

  translate(node: Node): Translated {
    const fc = asKind(node, 'FuncCall');
    const name = fc ? calledName(fc) : '';
    if (fc && hasFact(name, 'exactAverage') && parts(node)?.length === 0) return this.average(fc, name);
    if (fc && fc.over && (name === 'lag' || name === 'lead')) return this.lagLead(fc, name);
    if (unconstrainedCastArg(node)) return this.numericCast(this.translate(unconstrainedCastArg(node)!), unconstrainedCastArg(node)!);
    if (fc && name === 'sqrt') return this.squareRoot(this.translate(fc.args![0]!));
    if (fc && LOGARITHMS.has(name) && parts(node) !== null)
      return this.logarithm(
        name,
        fc.args!.map((arg) => this.translate(arg)),
      );
    const power = wholePower(node);
    if (power) return this.wholePower(this.translate(power.base), power.exponent);
    const powerOf = anyPower(node);
    if (powerOf)
      return this.logarithm(
        'power',
        powerOf.map((arg) => this.translate(arg)),
      );
    const inner = parts(node);
    if (inner === null) return this.leaf(node);
    const done = inner.map((part) => this.translate(part));
    // round(i), sign(i) and kin of an integer are double precision in PostgreSQL; round(i, n) and
    // trunc(i, n) exist for numeric only: numeric of scale n.
    if (fc && OF_FLOAT_OR_NUMERIC.has(name) && done[0]!.kind.family === 'int') {
      if ((name === 'round' || name === 'trunc') && fc.args!.length === 2) {
        const digits = Number(literalText(fc.args![1]));
        const pair = mark(call(`vdb_num_${name}`, [done[0]!.pair!, int(digits)]));
        return { pair, kind: { family: 'numeric', scale: Math.max(digits, 0) }, perValue: false };
      }
      return { pair: null, kind: { family: 'float', single: false }, perValue: false };
    }
    const kind = combined(done.map((d) => d.kind));
    const perValue = done.some((d) => d.perValue);
    const pairs = done.map((d) => d.pair);
    const ready = isExact(kind) && pairs.every((p): p is Node => p !== null);
    // Integers only: the engine's own value (integer division stays integer division).
    if (kind.family === 'int') return { pair: this.leafPair(node, kind), kind, perValue: false };
    if (!ready) return { pair: null, kind, perValue };
    const mixed = new Set(done.map((d) => (d.kind.family === 'numeric' && d.kind.scale >= 0 ? d.kind.scale : d.kind.family))).size > 1;
    const expr = asKind(node, 'A_Expr');
    if (expr) {
      const operator = fieldNames(expr.name).join('');
      if (pairs.length === 1) return { pair: mark(call('vdb_num_neg', pairs)), kind, perValue };
      const macro = { '+': 'vdb_num_add', '-': 'vdb_num_sub', '*': 'vdb_num_mul', '/': 'vdb_num_div' }[operator]!;
      return { pair: mark(call(macro, pairs)), kind, perValue: perValue || operator === '/' };
    }
    if (fc) {
      if (name === 'abs' || name === 'sign')
        return { pair: mark(call(`vdb_num_${name}`, pairs)), kind, perValue: perValue || name === 'sign' };
      if (FLOORS.has(name)) return { pair: mark(call(name === 'floor' ? 'vdb_num_floor' : 'vdb_num_ceil', pairs)), kind, perValue };
      const digits = fc.args!.length === 2 ? Number(literalText(fc.args![1])) : 0;
      return { pair: mark(call(`vdb_num_${name}`, [pairs[0]!, int(digits)])), kind, perValue };
    }
    const minMax = asKind(node, 'MinMaxExpr');
    if (minMax) {
      const step = minMax.op === 'IS_GREATEST' ? 'vdb_num_greatest2' : 'vdb_num_least2';
      const folded = pairs.slice(1).reduce((acc, pair) => mark(call(step, [acc, pair])), pairs[0]!);
      return { pair: folded, kind, perValue: perValue || mixed };
    }
    return { pair: { CoalesceExpr: { args: pairs } }, kind, perValue: perValue || mixed };
  }

  /**
   * `x::numeric`: integers and numeric keep their value and scale; a float is read from its text
   * with 15 significant digits (6 for a real) and text as numeric input, each value with its own scale.
   */
  private numericCast(inner: Translated, arg: Node): Translated {
    switch (inner.kind.family) {
      case 'int':
        return { pair: inner.pair, kind: { family: 'numeric', scale: 0 }, perValue: inner.perValue };
      case 'numeric':
        return inner;
      case 'float':
        return {
          pair: mark(call(inner.kind.single ? 'vdb_num_of_real' : 'vdb_num_of_double', [arg])),
          kind: { family: 'numeric', scale: -1 },
          perValue: true,
        };
      case 'text':
        return { pair: mark(call('vdb_num_of_text', [arg])), kind: { family: 'numeric', scale: -1 }, perValue: true };
      default:
        return { pair: null, kind: { family: 'other' }, perValue: false };
    }
  }

  /** sqrt(x) of a numeric, at PostgreSQL's scale; of anything else a float (the engine's own). */
  private squareRoot(inner: Translated): Translated {
    if (inner.kind.family !== 'numeric' || !inner.pair) return { pair: null, kind: { family: 'float', single: false }, perValue: false };
    return { pair: mark(call('vdb_num_sqrt_pg', [inner.pair])), kind: { family: 'numeric', scale: -1 }, perValue: true };
  }

  /**
   * ln, exp, log10 and log of numeric, at PostgreSQL's scale; of one integer a double (the
   * engine's own); log(b, x) of integers and numeric is numeric; so is power(x, y) with a numeric.
   */
  private logarithm(name: string, done: Translated[]): Translated {
    const float: Translated = { pair: null, kind: { family: 'float', single: false }, perValue: false };
    const pairs = done.map((d) => d.pair);
    if (!pairs.every((p): p is Node => p !== null)) return { pair: null, kind: combined(done.map((d) => d.kind)), perValue: false };
    if (done.length === 1 && done[0]!.kind.family !== 'numeric') return float;
    // power of integers is double precision (PostgreSQL's dpow); with a numeric, numeric.
    if (name === 'power' && done.every((d) => d.kind.family === 'int')) return float;
    const texts = pairs.map((pair) => mark(call('vdb_num_text', [pair])));
    const [fn, a, b] =
      name === 'ln' || name === 'exp'
        ? [name, texts[0]!, stringConst('')]
        : texts.length === 1
          ? ['log', stringConst('10'), texts[0]!]
          : [name, ...texts];
    const value = mark(call('vdb_num_math', [stringConst(fn), a!, b!]));
    return { pair: mark(call('vdb_num_of_text', [value])), kind: { family: 'numeric', scale: -1 }, perValue: true };
  }

  /** x ^ n of a numeric, at PostgreSQL's scale; of an integer or a float a double (the engine's own). */
  private wholePower(base: Translated, exponent: number): Translated {
    if (base.kind.family !== 'numeric' || !base.pair) return { pair: null, kind: { family: 'float', single: false }, perValue: false };
    return { pair: mark(call('vdb_num_power', [base.pair, int(exponent)])), kind: { family: 'numeric', scale: -1 }, perValue: true };
  }

  private average(fc: FuncCall, name: string): Translated {
    const arg = fc.args![0]!;
    const kind = this.kinds[this.next++]!;
    if (!isExact(kind)) return { pair: null, kind: kind.family === 'float' ? kind : { family: 'other' }, perValue: false };
    const digits = kind.family === 'numeric' ? mark(call('vdb_unscaled', [arg])) : mark(call('vdb_hugeint', [arg]));
    const aggregate = (fn: string, args: Node[]) => {
      const made = mark(call(fn, args));
      Object.assign(made.FuncCall, { agg_filter: fc.agg_filter, agg_distinct: fc.agg_distinct, over: fc.over });
      return made;
    };
    const scale = scaleOf(kind);
    const sum = mark(call('vdb_num', [aggregate('sum', [digits]), int(scale)]));
    const count = aggregate('count', [arg]);
    let pair: Node;
    if (name === 'avg') pair = mark(call('vdb_num_div', [sum, mark(call('vdb_num', [count, int(0)]))]));
    else {
      const squares = mark(
        call('vdb_num', [
          aggregate('sum', [{ A_Expr: { kind: 'AEXPR_OP', name: [{ String: { sval: '*' } }], lexpr: digits, rexpr: digits } }]),
          int(2 * scale),
        ]),
      );
      const sample = name !== 'var_pop' && name !== 'stddev_pop';
      const macro = name.startsWith('stddev') ? 'vdb_num_stddev' : 'vdb_num_variance';
      pair = mark(call(macro, [sum, squares, count, { A_Const: { boolval: { boolval: sample } } }]));
    }
    return { pair, kind: { family: 'numeric', scale: -1 }, perValue: true };
  }

  private lagLead(fc: FuncCall, name: string): Translated {
    const [value, offset, fallback] = fc.args as [Node, Node, Node];
    const valueKind = this.kinds[this.next++]!;
    const fallbackKind = this.kinds[this.next++]!;
    const kind = combined([valueKind, fallbackKind]);
    if (kind.family !== 'numeric') return { pair: null, kind, perValue: false };
    const shifted = mark(call(name, [this.leafPair(value, valueKind), offset, this.leafPair(fallback, fallbackKind)]));
    shifted.FuncCall.over = fc.over;
    return { pair: shifted, kind, perValue: scaleOf(valueKind) !== scaleOf(fallbackKind) };
  }
}

/** The outermost SELECT whose select list may hold such values, else null. */
function outerSelect(tree: ParseResult): SelectStmt | null {
  const select = asKind(tree.stmts?.[0]?.stmt, 'SelectStmt');
  if (!select || select.op !== 'SETOP_NONE' || select.distinctClause || !select.targetList) return null;
  return select;
}

/** Whether ORDER BY or GROUP BY names the i-th column (by position or name): left as it was then. */
function referenced(select: SelectStmt, i: number, target: ResTarget): boolean {
  const names = new Set<string>();
  if (target.name) names.add(target.name);
  const fc = asKind(target.val, 'FuncCall');
  if (fc) names.add(calledName(fc));
  const items = [...(select.sortClause ?? []).map((item) => asKind(item, 'SortBy')?.node), ...(select.groupClause ?? [])];
  return items.some((item) => {
    if (isIntegerConst(item)) return Number(literalText(item)) === i + 1;
    const ref = asKind(item, 'ColumnRef');
    return ref !== undefined && fieldNames(ref.fields).length === 1 && names.has(fieldNames(ref.fields)[0]!);
  });
}

const withTargets = (tree: ParseResult, select: SelectStmt, targetList: Node[]): ParseResult => ({
  ...tree,
  stmts: [{ ...tree.stmts![0], stmt: { SelectStmt: { ...select, targetList } } }, ...tree.stmts!.slice(1)],
});

/** Whether `node` is a literal cast to numeric that PostgreSQL reads as NaN ('NaN'::numeric, ' nan '::numeric(5,2)). */
export function isNumericNaN(node: Node | undefined): boolean {
  const cast = asKind(node, 'TypeCast');
  const names = fieldNames(cast?.typeName?.names).filter((part) => part !== 'pg_catalog');
  if (!cast || cast.typeName?.arrayBounds || names.length !== 1 || names[0]!.toLowerCase() !== 'numeric') return false;
  return asKind(cast.arg, 'A_Const')?.sval !== undefined && literalText(cast.arg)!.trim().toLowerCase() === 'nan';
}

/**
 * The select list's numeric NaN literals, written as PostgreSQL's text (the engine's numbers
 * hold no NaN; elsewhere such a literal is refused, postgres-values.ts).
 */
function withNaNs(tree: ParseResult, select: SelectStmt): ParseResult {
  let changed = false;
  const targetList = select.targetList!.map((item, i) => {
    const target = asKind(item, 'ResTarget');
    if (!target || !isNumericNaN(target.val) || referenced(select, i, target)) return item;
    changed = true;
    return { ResTarget: { ...target, name: target.name ?? 'numeric', val: mark(call('vdb_num_shown', [stringConst('NaN')])) } };
  });
  return changed ? withTargets(tree, select, targetList) : tree;
}

/** The select list's to_json and json_agg, marked to be written as their text (the engine's JSON writer would respell it). */
function withJsonTexts(tree: ParseResult, select: SelectStmt): ParseResult {
  let changed = false;
  const targetList = select.targetList!.map((item, i) => {
    const target = asKind(item, 'ResTarget');
    const fc = asKind(target?.val, 'FuncCall');
    const rowJson = fc && calledName(fc) === 'row_to_json' && asKind(fc.args?.[0], 'RowExpr') !== undefined;
    if (!target || !fc || !(hasFact(calledName(fc), 'jsonText') || rowJson) || referenced(select, i, target)) return item;
    changed = true;
    return { ResTarget: { ...target, name: target.name ?? calledName(fc), val: mark(call('vdb_json_result', [target.val!])) } };
  });
  return changed ? withTargets(tree, select, targetList) : tree;
}

/**
 * The statement with its per-value numeric columns written by the numeric macros, or the tree as
 * it was. `write` turns a tree into the engine's SQL.
 */
export async function withNumericValues(
  connection: DuckDBConnection,
  tree: ParseResult,
  write: (tree: ParseResult) => string,
): Promise<ParseResult> {
  const first = outerSelect(tree);
  if (!first) return tree;
  tree = withJsonTexts(tree, first);
  tree = withNaNs(tree, outerSelect(tree)!);
  const select = outerSelect(tree)!;
  const targets = select.targetList!.map((item) => asKind(item, 'ResTarget'));
  const candidates = targets.flatMap((target, i) =>
    target?.val && parts(target.val) !== null && mayChooseScale(target.val) && !referenced(select, i, target) ? [{ i, target }] : [],
  );
  if (candidates.length === 0) return tree;
  const leaves = candidates.map(({ target }) => {
    const found: Leaf[] = [];
    leavesOf(target.val!, found);
    return found;
  });
  const witnesses = leaves.flat().map((leaf, k): Node => ({ ResTarget: { name: `vdb_w${k}`, val: leaf.witness } }));
  const probe = async (targetList: Node[]): Promise<DuckDBType[]> => {
    const described = await describe(
      connection,
      write(withTargets(tree, select, [...targetList, ...witnesses])),
      MAX_RESULT_COLUMNS + witnesses.length,
    );
    return described.slice(select.targetList!.length).map((c) => c.type);
  };
  let types: DuckDBType[];
  try {
    types = await probe(select.targetList!);
  } catch (err) {
    if (err instanceof ApiError) throw err;
    // A target that only the translation makes valid (text::numeric): probed without the candidates.
    const blank = new Set(candidates.map(({ i }) => i));
    try {
      types = await probe(
        select.targetList!.map((item, i) => (blank.has(i) ? { ResTarget: { val: { A_Const: { isnull: true } } } } : item)),
      );
    } catch (again) {
      if (again instanceof ApiError) throw again;
      return tree; // the statement's own error comes when it runs as written
    }
  }
  const targetList = [...select.targetList!];
  let offset = 0;
  candidates.forEach(({ i, target }, c) => {
    const count = leaves[c]!.length;
    const translator = new Translator(types.slice(offset, offset + count).map(kindOfType));
    offset += count;
    const done = translator.translate(target.val!);
    if (!done.pair || !done.perValue || done.kind.family !== 'numeric') return;
    const name = target.name ?? (asKind(target.val, 'FuncCall') ? fieldNames(asKind(target.val, 'FuncCall')!.funcname).pop() : '?column?');
    targetList[i] = { ResTarget: { ...target, name, val: mark(call('vdb_num_result', [done.pair])) } };
  });
  return withTargets(tree, select, targetList);
}
