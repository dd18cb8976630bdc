/**
 * What user SQL may call: the functions, table functions, operators, types, collations and
 * node kinds vdb lists (the functions as facts of tree/functions.ts: where each may be called).
 * Everything else is refused with a 400 that names it, decided on the parsed tree before
 * anything runs, so no statement reaches what the engine (DuckDB) offers beyond these: its
 * files, settings, catalogs, SQL-text functions or state.
 *
 * An allow-list, not a deny-list: an engine upgrade that adds functions adds nothing here.
 * `REFUSED_ENGINE_FUNCTIONS` (refused-functions.ts) names, with a reason, every function the
 * engine has that is not allowed; a test fails when the engine offers one that is in neither list.
 */
import { badRequest } from '../../errors.js';
import type { A_Expr, FuncCall, Node, RangeFunction, TypeName } from '@pgsql/types';
import { asKind, fieldNames, isObject, type KindAndNode, exprIs } from '../tree/ast.js';
import { refusalReason } from './refused-functions.js';
import { functionsWith, hasFact } from '../tree/functions.js';

const words = (text: string): ReadonlySet<string> => new Set(text.trim().split(/\s+/));

/** Where user SQL may call a function: each a fact of tree/functions.ts, the one list of functions. */
const ALLOWED_USES = ['allowedScalar', 'allowedAggregate', 'allowedWindow', 'allowedSetInSelectList', 'allowedInFrom'] as const;

/** Operators (A_Expr names). The regular-expression ones, # (xor), |/ and ||/ (roots) are translated for the engine (engine-dialect.ts). */
export const OPERATORS = words(`
  + - * / % ^ = <> != < > <= >= || & | # << >> ~ @ |/ ||/ -> ->> @> <@ && ^@
  ~~ !~~ ~~* !~~* ~* !~ !~*
`);

const REGEX_OPERATORS = words(`~ ~* !~ !~*`);

/** Every function and operator name on the lists (whatever its place). */
export const ALLOWED_NAMES: ReadonlySet<string> = new Set([...ALLOWED_USES.flatMap(functionsWith), ...OPERATORS]);

/** Types (last part of a type name; `pg_catalog.` is allowed in front). */
export const TYPES = words(`
  bool boolean int2 smallint int4 int integer int8 bigint float4 real float8 float numeric decimal
  text varchar bpchar char character name date time timestamp timestamptz interval bytea json uuid money
`);

/** Collations the engine orders as PostgreSQL does (bytewise). */
export const COLLATIONS = words(`C POSIX`);

/** SQL value functions (CURRENT_DATE, ...); CURRENT_USER and its kind are replaced by the user's name (access.ts). */
const VALUE_FUNCTIONS = words(`
  SVFOP_CURRENT_DATE SVFOP_CURRENT_TIME SVFOP_CURRENT_TIME_N SVFOP_CURRENT_TIMESTAMP SVFOP_CURRENT_TIMESTAMP_N
  SVFOP_LOCALTIME SVFOP_LOCALTIME_N SVFOP_LOCALTIMESTAMP SVFOP_LOCALTIMESTAMP_N
  SVFOP_CURRENT_USER SVFOP_SESSION_USER SVFOP_USER SVFOP_CURRENT_ROLE
`);

/** Table sample methods (TABLESAMPLE); reservoir (a number of rows) is the engine's, documented in docs/sql.md. */
const SAMPLE_METHODS = words(`bernoulli system reservoir`);

/**
 * Syntax node kinds a statement may contain. A kind not listed (XML, cursors, DuckDB-only
 * syntax the grammar may grow) is refused rather than passed on with a meaning vdb never checked.
 */
const NODE_KINDS = words(`
  RawStmt SelectStmt InsertStmt UpdateStmt DeleteStmt ExplainStmt CallStmt ViewStmt DropStmt CreateTableAsStmt RefreshMatViewStmt
  ResTarget ColumnRef A_Star A_Const String Integer Float Boolean BitString List Alias
  RangeVar RangeSubselect RangeFunction RangeTableSample JoinExpr
  FuncCall A_Expr BoolExpr NullTest BooleanTest SubLink CaseExpr CaseWhen CoalesceExpr MinMaxExpr NullIfExpr
  TypeCast TypeName CollateClause SortBy WindowDef A_Indirection A_Indices A_ArrayExpr RowExpr
  WithClause CommonTableExpr GroupingSet GroupingFunc SQLValueFunction NamedArgExpr
  OnConflictClause InferClause IndexElem MultiAssignRef DefElem FuncCall ObjectWithArgs
`);

/**
 * Calls and type names vdb writes itself into a statement (the error() and the casts of an
 * INSERT's row check): allowed by identity of the syntax node, so no statement text can claim
 * them. What they contain is checked as usual.
 */
const ownNodes = new WeakSet<object>();

/** Marks a call or type name vdb built itself as allowed (see ownNodes); returns it. */
export function vdbOwn<T extends object>(node: T): T {
  ownNodes.add(node);
  return node;
}

/** A deep copy of `value` in which the copies of nodes vdb marked as its own are marked too. */
export function copyOwned<T>(value: T): T {
  if (Array.isArray(value)) return value.map((item: unknown) => copyOwned(item)) as T;
  if (!isObject(value)) return value;
  const copy = Object.fromEntries(Object.entries(value).map(([key, child]) => [key, copyOwned(child)]));
  if (ownNodes.has(value)) ownNodes.add(copy);
  return copy as T;
}

const refuse = (what: string, hint: string, why: string | null = null) =>
  badRequest(`${what} is not available in vdb${why ? `: ${why}` : ''}.`, hint, 'Not available');

const FUNCTION_HINT =
  'vdb answers PostgreSQL functions it lists in docs/sql.md ("Functions"); data is reached through the schemas of the virtual database.';

/** The function's name as the engine looks it up: lower case, `pg_catalog.` dropped; null when otherwise qualified. */
function functionName(funcname: unknown): { name: string; written: string } {
  const parts = fieldNames(funcname);
  const written = parts.join('.');
  if (parts.length === 2 && parts[0]!.toLowerCase() === 'pg_catalog') return { name: parts[1]!.toLowerCase(), written };
  if (parts.length !== 1) throw refuse(`Function "${written}"`, FUNCTION_HINT);
  return { name: parts[0]!.toLowerCase(), written };
}

function checkCall(call: FuncCall, inFrom: boolean): void {
  if (ownNodes.has(call)) return;
  const { name, written } = functionName(call.funcname);
  if (call.func_variadic && !hasFact(name, 'allowedVariadic'))
    throw refuse(`VARIADIC in a call of ${written}`, 'Pass the arguments one by one.');
  if (inFrom) {
    if (!hasFact(name, 'allowedInFrom')) {
      const tableFunctions = functionsWith('allowedInFrom').join(', ');
      throw refuse(`Table function "${written}"`, `Table functions in FROM: ${tableFunctions}.`, refusalReason(name));
    }
    return;
  }
  const allowed = call.over
    ? hasFact(name, 'allowedAggregate') || hasFact(name, 'allowedWindow')
    : hasFact(name, 'allowedScalar') || hasFact(name, 'allowedAggregate') || hasFact(name, 'allowedSetInSelectList');
  if (!allowed) throw refuse(`Function "${written}"`, FUNCTION_HINT, refusalReason(name));
}

/** The helper each pattern operator is parsed with: `x LIKE p ESCAPE e` is `x ~~ like_escape(p, e)`. */
const PATTERN_HELPERS: Record<string, { name: string; args: number[] }> = {
  AEXPR_LIKE: { name: 'like_escape', args: [2] },
  AEXPR_ILIKE: { name: 'like_escape', args: [2] },
  AEXPR_SIMILAR: { name: 'similar_to_escape', args: [1, 2] },
};

function checkOperator(expr: A_Expr): void {
  // LIKE ... ESCAPE and SIMILAR TO call their helper on the pattern (translated in sql-patterns.ts):
  // allowed there only; what it takes is checked as usual.
  const helper = PATTERN_HELPERS[String(expr.kind)];
  const pattern = asKind(expr.rexpr, 'FuncCall');
  if (helper && pattern && functionName(pattern.funcname).name === helper.name && helper.args.includes(pattern.args?.length ?? 0))
    ownNodes.add(pattern);
  // NOT SIMILAR TO is the same kind, with the operator !~: both are translated as a whole.
  if (exprIs(expr, 'AEXPR_SIMILAR')) return;
  // BETWEEN and its kind name themselves by keyword; every other kind names an operator.
  if (String(expr.kind).includes('BETWEEN')) return;
  // The regular-expression operators are translated for the engine only as plain operators (not ANY/ALL).
  checkOperatorName(expr.name, exprIs(expr, 'AEXPR_OP'));
}

/** An operator's name list (`=`, `pg_catalog.+`): on the list, and qualified by pg_catalog only. */
function checkOperatorName(name: unknown, plain = false): void {
  const parts = fieldNames(name);
  const op = parts[parts.length - 1] ?? '';
  const qualifiedElsewhere = parts.length > 2 || (parts.length === 2 && parts[0]!.toLowerCase() !== 'pg_catalog');
  const untranslated = REGEX_OPERATORS.has(op) && !plain;
  if (qualifiedElsewhere || !OPERATORS.has(op) || untranslated)
    throw refuse(`Operator "${parts.join('.')}"`, 'docs/sql.md ("Operators") lists the operators vdb answers.', refusalReason(op));
}

function checkType(typeName: TypeName): void {
  if (ownNodes.has(typeName)) return;
  const parts = fieldNames(typeName.names);
  const written = parts.join('.');
  const name = parts.length === 2 && parts[0]!.toLowerCase() === 'pg_catalog' ? parts[1]! : parts.length === 1 ? parts[0]! : null;
  if (name === null || !TYPES.has(name.toLowerCase()) || typeName.setof || typeName.pct_type) {
    throw refuse(`Type "${written}"`, `Types: ${[...TYPES].join(', ')} (and arrays of them).`);
  }
  // `interval '1' year` restricts the fields of an interval: one field over a whole number is
  // translated (postgres-values.ts), the engine reads the other forms otherwise.
  if (name.toLowerCase() === 'interval' && Array.isArray(typeName.typmods) && typeName.typmods.length > 0) {
    const [mask, precision] = typeName.typmods.map((mod) => asKind(mod, 'A_Const')?.ival?.ival ?? 0);
    // A precision (INTERVAL(3), SECOND(3)) is read with literals (interval-input.ts).
    const field = mask === 0x7fff || intervalTruncation(Number(mask));
    if (!field || typeName.typmods.length > 2 || (precision ?? 0) < 0) {
      throw refuse(
        'An interval with a precision (INTERVAL(3)) or fields of another form',
        "Write the units inside the literal: interval '1 day 2 hours'.",
      );
    }
  }
}

/**
 * The unit an interval restricted to fields (`YEAR`, `DAY TO HOUR`: PostgreSQL's INTERVAL_MASK
 * bits) is truncated to: its lowest field. Undefined for other masks.
 */
export function intervalTruncation(mask: number): string | undefined {
  if (!Number.isInteger(mask) || mask <= 0) return undefined;
  const bits = Object.keys(INTERVAL_FIELDS).map(Number);
  if ((mask & ~bits.reduce((all, bit) => all | bit, 0)) !== 0) return undefined;
  const lowest = ['second', 'minute', 'hour', 'day', 'month', 'year'].find((unit) =>
    bits.some((bit) => (mask & bit) !== 0 && INTERVAL_FIELDS[bit] === unit),
  );
  return lowest;
}

/** The one-field restrictions of an interval (PostgreSQL's INTERVAL_MASK bits) and their units. */
export const INTERVAL_FIELDS: Readonly<Record<number, string>> = {
  [1 << 1]: 'month',
  [1 << 2]: 'year',
  [1 << 3]: 'day',
  [1 << 10]: 'hour',
  [1 << 11]: 'minute',
  [1 << 12]: 'second',
};

/**
 * Refuses (400) anything in `tree` that is not on the lists: call it on every statement a
 * user sends, and again on what binding produced (views, row conditions and masks expanded).
 */
export function checkAllowed(tree: unknown): void {
  // Iterative, so that a deeply nested statement cannot overflow the stack here.
  const pending: unknown[] = [tree];
  while (pending.length > 0) {
    const value = pending.pop();
    if (Array.isArray(value)) {
      pending.push(...value);
      continue;
    }
    if (!isObject(value)) continue;
    for (const [key, child] of Object.entries(value)) {
      if (!isObject(child) && !Array.isArray(child)) continue;
      // Type names and operator names also stand unwrapped, as fields of other nodes.
      if (key === 'typeName' && isObject(child)) checkType(child);
      if (key === 'useOp' || key === 'operName') checkOperatorName(child);
      if (isObject(child) && /^[A-Z]/.test(key)) {
        if (!NODE_KINDS.has(key))
          throw refuse(
            `The construct ${key}`,
            'Send PostgreSQL SELECT, INSERT, UPDATE, DELETE, EXPLAIN, CALL, CREATE [MATERIALIZED] VIEW, REFRESH MATERIALIZED VIEW or DROP [MATERIALIZED] VIEW statements.',
          );
        if (key === 'CallStmt') {
          // A procedure of the virtual database (procedures.ts checks its name); its arguments are checked here.
          pending.push(isObject(child.funccall) ? child.funccall.args : null);
          continue;
        }
        checkNode(...([key, child] as KindAndNode));
        if (key === 'RangeFunction') {
          // The calls themselves are table functions; what they take is checked as any expression.
          for (const call of rangeFunctionCalls(child)) {
            checkCall(call, true);
            pending.push({ ...call, funcname: null });
          }
          // What is left (alias, column definitions of ROWS FROM) is checked as usual.
          pending.push({ ...child, functions: null }, ...rangeFunctionRest(child));
          continue;
        }
      }
      pending.push(child);
    }
  }
}

function checkNode(...[kind, node]: KindAndNode): void {
  switch (kind) {
    case 'FuncCall':
      checkCall(node, false);
      break;
    case 'A_Expr':
      checkOperator(node);
      break;
    case 'TypeName':
      checkType(node);
      break;
    case 'CollateClause': {
      const name = fieldNames(node.collname).join('.');
      if (!COLLATIONS.has(name)) throw refuse(`Collation "${name}"`, `Collations: ${[...COLLATIONS].join(', ')}.`);
      break;
    }
    case 'SQLValueFunction':
      if (!VALUE_FUNCTIONS.has(String(node.op)))
        throw refuse(
          String(node.op).replace(/^SVFOP_/, ''),
          'CURRENT_DATE, CURRENT_TIME, CURRENT_TIMESTAMP, LOCALTIME, LOCALTIMESTAMP and CURRENT_USER are available.',
        );
      break;
    case 'RangeTableSample': {
      const method = fieldNames(node.method).join('.').toLowerCase();
      if (!SAMPLE_METHODS.has(method)) throw refuse(`TABLESAMPLE method "${method}"`, 'Use BERNOULLI or SYSTEM.');
      break;
    }
  }
}

/** Each entry of `FROM f(...)` / `ROWS FROM (f(...), g(...))`: the call, then its column definitions. */
const rangeFunctionEntries = (range: RangeFunction): Node[][] =>
  (range.functions ?? []).map((entry) => ('List' in entry ? (entry.List.items ?? []) : []));

/** The parts of `FROM f(...)` entries beside their calls (column definition lists). */
function rangeFunctionRest(range: RangeFunction): unknown[] {
  return rangeFunctionEntries(range).flatMap((items) => items.slice(1));
}

/** The function calls of `FROM f(...)` and `FROM ROWS FROM (f(...), g(...))`. */
function rangeFunctionCalls(range: RangeFunction): FuncCall[] {
  return rangeFunctionEntries(range).flatMap((items) => items.flatMap((item) => ('FuncCall' in item ? [item.FuncCall] : [])));
}
