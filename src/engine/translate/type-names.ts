/**
 * pg_typeof(x): PostgreSQL's name of the value's type, from the engine's type (the same
 * correspondence vdb's column types follow: test/engine/postgres-answers.ts). Where one engine
 * type stands for several of PostgreSQL's (VARCHAR for text, varchar, char(n) and name; JSON for
 * json and jsonb; HUGEINT), the name is not known and the call is refused while it runs, unless
 * the argument says it: an untyped literal is `unknown`, a cast names its type.
 */
import type { Node } from '@pgsql/types';
import { asKind } from '../tree/ast.js';
import { call, engineCall, isNullConst, isStringConst, notAsPostgres, op, stringConst } from '../tree/syntax-nodes.js';
import { typeNameOf } from './postgres-values.js';

/** PostgreSQL's names of the engine's types that stand for one type of PostgreSQL. */
const NAMES: Readonly<Record<string, string>> = {
  BOOLEAN: 'boolean',
  SMALLINT: 'smallint',
  INTEGER: 'integer',
  BIGINT: 'bigint',
  FLOAT: 'real',
  DOUBLE: 'double precision',
  DATE: 'date',
  TIME: 'time without time zone',
  TIMESTAMP: 'timestamp without time zone',
  'TIMESTAMP WITH TIME ZONE': 'timestamp with time zone',
  INTERVAL: 'interval',
  UUID: 'uuid',
  BLOB: 'bytea',
};

/** PostgreSQL's names of the text types a cast may name. */
const CAST_NAMES: Readonly<Record<string, string>> = {
  text: 'text',
  varchar: 'character varying',
  name: 'name',
  json: 'json',
};

export function pgTypeofCall(args: Node[]): Node {
  if (args.length !== 1) throw notAsPostgres(`pg_typeof with ${args.length} arguments`, 'Give one value.');
  const value = args[0]!;
  if (isStringConst(value) || isNullConst(value)) return stringConst('unknown');
  const named = CAST_NAMES[typeNameOf(asKind(value, 'TypeCast')?.typeName) ?? ''];
  const typeOf = call('typeof', [value]);
  const when = (engineType: Node, name: string): Node => ({ CaseWhen: { expr: engineType, result: stringConst(name) } });
  const is = (engineType: string) => op('=', typeOf, stringConst(engineType));
  const decimal = engineCall('starts_with', [typeOf, stringConst('DECIMAL(')]);
  const list = engineCall('ends_with', [typeOf, stringConst('[]')]);
  const and = (args: Node[]): Node => ({ BoolExpr: { boolop: 'AND_EXPR', args } });
  const failure = call('error', [
    op(
      '||',
      stringConst("pg_typeof() of a value of the engine's type "),
      op(
        '||',
        typeOf,
        stringConst(" is not supported by vdb's engine: several of PostgreSQL's types are that type there; cast the value (x::text)"),
      ),
    ),
  ]);
  const arms: Node[] = [];
  if (named) arms.push(when(is(named === 'json' ? 'JSON' : 'VARCHAR'), named));
  for (const [engineType, name] of Object.entries(NAMES)) {
    arms.push(when(is(engineType), name), when(is(`${engineType}[]`), `${name}[]`));
  }
  const notList: Node = { BoolExpr: { boolop: 'NOT_EXPR', args: [list] } };
  arms.push(
    when(and([decimal, notList]), 'numeric'),
    when(and([decimal, list, engineCall('ends_with', [typeOf, stringConst(')[]')])]), 'numeric[]'),
  );
  return { CaseExpr: { args: arms, defresult: failure } };
}
