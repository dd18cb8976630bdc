/**
 * to_char(number, template) as PostgreSQL writes it, for the engine: a numeric literal is
 * written at translation (its type is the literal's: int4, int8 or numeric), a value computed
 * per row by the engine function vdb_to_char (runtime/number-format.ts) with the kind of
 * number PostgreSQL's to_char takes for the engine's type of the value. A constant template is
 * read (and PostgreSQL's template errors raised) once, here; a computed one per row.
 */
import type { Node } from '@pgsql/types';
import { badRequest } from '../../errors.js';
import { NumberFormatError, numberTemplate, numberText, type NumberKind, type NumberTemplate } from '../../runtime/number-format.js';
import { asKind } from '../tree/ast.js';
import {
  call,
  engineCall,
  isNullConst,
  isStringConst,
  literalText,
  notAsPostgres,
  stringConst,
  typeIs,
  typeNamed,
  written,
} from '../tree/syntax-nodes.js';

/** PostgreSQL's error (a 400), or vdb's refusal of what it does not do. */
function failure(err: unknown): never {
  if (err instanceof NumberFormatError) {
    if (err.unsupported) throw notAsPostgres(err.message, 'See docs/sql.md for the to_char patterns of numbers.');
    throw badRequest(err.message, 'See the template patterns for numeric formatting in PostgreSQL’s documentation.', 'Invalid query');
  }
  throw err;
}

/** The template read as PostgreSQL reads it, or its error as a 400. */
export function readNumberTemplate(template: string): NumberTemplate {
  try {
    return numberTemplate(template);
  } catch (err) {
    return failure(err);
  }
}

const INT4 = { low: -(2n ** 31n), high: 2n ** 31n - 1n };
const INT8 = { low: -(2n ** 63n), high: 2n ** 63n - 1n };

/** A numeric literal's type as PostgreSQL's parser gives it: int4, int8 when it fits, else numeric. */
function literalKind(text: string): NumberKind {
  if (!/^-?\d+$/.test(text)) return 'numeric';
  const value = BigInt(text);
  if (value >= INT4.low && value <= INT4.high) return 'int4';
  return value >= INT8.low && value <= INT8.high ? 'int8' : 'numeric';
}

/** to_char of a numeric literal: the text itself; null when `value` is no numeric literal. */
export function literalNumberText(value: Node, template: string): Node | null {
  const constant = asKind(value, 'A_Const');
  if (!constant || (!constant.ival && !constant.fval)) return null;
  const text = literalText(value)!;
  try {
    return stringConst(numberText(literalKind(text), text, numberTemplate(template)));
  } catch (err) {
    return failure(err);
  }
}

/**
 * The kind of to_char PostgreSQL calls for the engine's type of a value: 'datetime' for dates,
 * times and intervals; null for types it has no to_char of numbers for. A smallint reaches
 * PostgreSQL's float8 form (its preferred type among the candidates).
 */
export function toCharKind(engineType: string): NumberKind | 'datetime' | null {
  if (engineType === 'INTEGER') return 'int4';
  if (engineType === 'BIGINT') return 'int8';
  if (engineType === 'HUGEINT' || engineType.startsWith('DECIMAL')) return 'numeric';
  if (engineType === 'FLOAT') return 'float4';
  if (engineType === 'DOUBLE' || engineType === 'SMALLINT' || engineType === 'TINYINT') return 'float8';
  if (/^(DATE|TIME|TIMESTAMP|INTERVAL)/.test(engineType)) return 'datetime';
  return null;
}

/** Whether a number written with an exponent (1e15: numeric to PostgreSQL, a double to the engine) is computed with (a cast of it is not). */
function hasExponentLiteral(node: unknown): boolean {
  if (Array.isArray(node)) return node.some(hasExponentLiteral);
  if (!node || typeof node !== 'object') return false;
  const record = node as Record<string, unknown>;
  const constant = record.A_Const as { fval?: { fval?: string } } | undefined;
  if (constant?.fval?.fval && /e/i.test(constant.fval.fval)) return true;
  const castOf = (record.TypeCast as { arg?: unknown } | undefined)?.arg as Record<string, unknown> | undefined;
  if (castOf?.A_Const) return false;
  return Object.values(record).some(hasExponentLiteral);
}

/**
 * to_char(value, template) of a number computed by the engine, `kind` the number's. A constant
 * template is read here; another must be text (PostgreSQL has no other form) and is read per row.
 */
export function numberTextCall(value: Node, kind: NumberKind | null, format: Node): Node {
  if (isNullConst(format)) return engineCast({ A_Const: { isnull: true } }, 'varchar');
  const template = isStringConst(format) ? literalText(format) : null;
  if (template !== null) readNumberTemplate(template);
  if (hasExponentLiteral(value) || hasExponentLiteral(format)) {
    throw notAsPostgres(
      'to_char of an expression with a number written with an exponent (1e15)',
      'Write the number in full (1000000000000000), or cast it: 1e15::float8.',
    );
  }
  // Floats as doubles: the engine's text of a double reads back as the same double.
  const number = kind === 'float4' || kind === 'float8' ? engineCast(value, 'float8') : value;
  const formatted = engineCall('vdb_to_char', [
    engineCast(number, 'varchar'),
    kind === null ? kindWhileRunning(value) : stringConst(kind),
    template === null ? engineCast(format, 'varchar') : stringConst(template),
  ]);
  if (template !== null) return formatted;
  const notText = { BoolExpr: { boolop: 'NOT_EXPR' as const, args: [typeIs(format, ['VARCHAR'])] } };
  const failure = call('error', [stringConst('to_char of a number takes a text template (function to_char does not exist for this type)')]);
  return { CaseExpr: { args: [{ CaseWhen: { expr: notText, result: failure } }], defresult: formatted } };
}

/** The kind of a value's to_char by its type as the statement runs (where no probe could tell it). */
function kindWhileRunning(value: Node): Node {
  const types: Array<[string[], NumberKind]> = [
    [['INTEGER'], 'int4'],
    [['BIGINT'], 'int8'],
    [['HUGEINT'], 'numeric'],
    [['FLOAT'], 'float4'],
    [['DOUBLE', 'SMALLINT', 'TINYINT'], 'float8'],
  ];
  const decimal = call('starts_with', [call('typeof', [value]), stringConst('DECIMAL')]);
  const failure = call('error', [stringConst("to_char of this type is not supported by vdb's engine here")]);
  return {
    CaseExpr: {
      args: [
        ...types.map(([names, kind]) => ({ CaseWhen: { expr: typeIs(value, names), result: stringConst(kind) } })),
        { CaseWhen: { expr: decimal, result: stringConst('numeric') } },
      ],
      defresult: failure,
    },
  };
}

/** A cast the rewrites leave alone. */
function engineCast(value: Node, type: string): Node {
  const made = { arg: value, typeName: typeNamed(type) };
  written.add(made);
  return { TypeCast: made };
}
