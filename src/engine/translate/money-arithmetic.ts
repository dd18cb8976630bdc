/**
 * money computed with, as PostgreSQL computes it on 64-bit cents: money + money, money - money,
 * money * number, number * money, money / number, sum/min/max of money (money), and
 * money / money (double precision). A pass before the rewrite writes each such expression as
 * one cast to money of its number (`(a::money + b::money)` as `(a::money::numeric(38,2) +
 * b::money::numeric(38,2))::money`), which the casts' rules then show or compare by their use
 * (cast-uses.ts, postgres-values.ts); multiplication and division go through the numeric
 * macros (runtime/numeric-macros.ts) that round as PostgreSQL does.
 */
import type { A_Expr, Node, TypeCast } from '@pgsql/types';
import { asKind, fieldNames, mapTreeUp, nameNode } from '../tree/ast.js';
import { badRequest } from '../../errors.js';
import { calledName, engineCall, int, isStringConst, notAsPostgres, op } from '../tree/syntax-nodes.js';

const MONEY_AGGREGATES = new Set(['sum', 'min', 'max']);

const operatorOf = (expr: A_Expr | undefined): string => (expr && expr.kind === 'AEXPR_OP' ? fieldNames(expr.name).join('.') : '');

/** A cast to money (no array). */
const isMoneyCast = (node: Node | undefined): boolean => {
  const cast = asKind(node, 'TypeCast');
  const names = fieldNames(cast?.typeName?.names).filter((part) => part !== 'pg_catalog');
  return cast !== undefined && !cast.typeName?.arrayBounds && names.length === 1 && names[0]!.toLowerCase() === 'money';
};

/** Whether `node` gives money: a cast to it, or money arithmetic. */
function isMoney(node: Node | undefined): boolean {
  if (isMoneyCast(node)) return true;
  const expr = asKind(node, 'A_Expr');
  const operator = operatorOf(expr);
  if (operator === '-' && !expr!.lexpr) {
    if (isMoney(expr!.rexpr)) throw badRequest('operator does not exist: - money', 'Write 0::money - x.', 'Invalid query');
    return false;
  }
  if (operator === '+' || operator === '-') return isMoney(expr!.lexpr) || isMoney(expr!.rexpr);
  if (operator === '*') return isMoney(expr!.lexpr) || isMoney(expr!.rexpr);
  if (operator === '/') return isMoney(expr!.lexpr) && !isMoney(expr!.rexpr);
  const fc = asKind(node, 'FuncCall');
  return fc !== undefined && MONEY_AGGREGATES.has(calledName(fc)) && fc.args?.length === 1 && !fc.agg_star && isMoney(fc.args[0]);
}

/** money / money: a double. */
const isRatio = (node: Node): boolean => {
  const expr = asKind(node, 'A_Expr');
  return operatorOf(expr) === '/' && isMoney(expr!.lexpr) && isMoney(expr!.rexpr);
};

const numeric = (value: Node): Node => ({
  TypeCast: { arg: value, typeName: { names: [nameNode('numeric')], typmods: [int(38), int(2)] } },
});

/** The number (numeric(38,2)) of a money expression (its operands already written by this pass). */
function numberOf(node: Node): Node {
  // A copy of the cast: the statement's own cast may also be met where the pass does not run (a probe of the select list).
  if (isMoneyCast(node)) return numeric({ TypeCast: { ...asKind(node, 'TypeCast')! } });
  // An untyped literal beside money is read as money, as PostgreSQL reads it.
  const moneyOperand = (operand: Node) =>
    isStringConst(operand) ? numeric({ TypeCast: { arg: operand, typeName: { names: [nameNode('money')] } } }) : numberOf(operand);
  const fc = asKind(node, 'FuncCall');
  if (fc) return { FuncCall: { ...fc, args: [numberOf(fc.args![0]!)] } };
  const expr = asKind(node, 'A_Expr')!;
  const operator = operatorOf(expr);
  const [left, right] = [expr.lexpr!, expr.rexpr];
  if (operator === '+' || operator === '-') {
    const plain = [left, right!].find((side) => !isMoney(side) && !isStringConst(side));
    if (plain)
      throw badRequest(`operator does not exist: money ${operator} a value other than money`, 'Cast it to money.', 'Invalid query');
    return op(operator, moneyOperand(left), moneyOperand(right!));
  }
  if (operator === '*') {
    if (isMoney(left) && isMoney(right)) throw badRequest('operator does not exist: money * money', null, 'Invalid query');
    const [money, factor] = isMoney(left) ? [left, right!] : [right!, left];
    if (isStringConst(factor)) throw notAsPostgres('money times an untyped literal', 'Give the literal a type: 2::int or 1.5::float8.');
    return engineCall('vdb_money_mul', [numberOf(money), factor]);
  }
  if (isStringConst(right)) throw notAsPostgres('money divided by an untyped literal', 'Give the literal a type: 2::int or 1.5::float8.');
  return engineCall('vdb_money_div', [numberOf(left), right!]);
}

/**
 * The statement with its money arithmetic written as casts of numbers to money (see the module
 * comment); children first, so that the parts left unchanged stay the same objects (the casts'
 * uses are found by identity).
 */
export function moneyArithmetic<T>(tree: T): T {
  return mapTreeUp(tree, (node) => {
    const expr = asKind(node, 'A_Expr');
    if (expr && isRatio(node)) return engineCall('vdb_money_ratio', [numberOf(expr.lexpr!), numberOf(expr.rexpr!)]);
    if (isMoneyCast(node) || !isMoney(node)) return node;
    const cast: TypeCast = { arg: numberOf(node), typeName: { names: [nameNode('money')] } };
    return { TypeCast: cast };
  });
}
