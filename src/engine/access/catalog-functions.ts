/**
 * The functions, casts and names PostgreSQL clients use to read its catalog (`version()`,
 * `format_type`, `pg_table_is_visible`, `has_table_privilege`, `'t'::regclass`, `COLLATE
 * "default"`, ...), rewritten before the allow-list into what the engine answers: constants and
 * CASE expressions computed here from the catalog and the user's permissions, or subqueries over
 * pg_catalog's relations, which the access rewrite then narrows like any. So an object the user
 * may not see is as absent from these answers as from the relations. Runs before checkAllowed:
 * whatever is not rewritten here is refused there.
 */
import type { A_Const, FuncCall, Node, ParseResult, TypeCast } from '@pgsql/types';
import type { TableDef } from '../../catalog/types.js';
import { writableKind } from '../../connectors/kinds.js';
import { badRequest, notFound } from '../../errors.js';
import type { AccessPolicy, Action } from '../../security/permissions.js';
import { INDEX_OID_BASE, PG_SCHEMAS, primaryKeyName, procedureArguments } from '../../sources/pg-catalog.js';
import { formatType, PG_TYPES } from '../../sources/pg-types.js';
import { SYSTEM_PROCEDURE_DEFS, SYSTEM_SCHEMAS } from '../../sources/system-tables.js';
import { sqlLiteral } from '../../runtime/duckdb.js';
import { parseExpression } from '../front/parse.js';
import { asKind, fieldNames, isObject, nameNode, replaceNodesBelow, walk } from '../tree/ast.js';
import { copyOwned, vdbOwn } from '../front/allow-list.js';
import type { BindCatalog } from './bind-catalog.js';
import { visibleObjects } from './catalog-visibility.js';

/** What the rewrite answers from: the catalog, the user, the virtual database's name. */
export interface CatalogContext {
  registry: BindCatalog;
  policy: AccessPolicy;
  vdbName: string;
}

/** The version() text: PostgreSQL's form, naming vdb. */
export const VERSION_TEXT = 'PostgreSQL 15.0 (vdb data virtualization server)';

const NAMES_OF_CATALOG_FUNCTIONS = new Set(
  `version current_database current_schema current_schemas pg_get_userbyid pg_encoding_to_char pg_table_is_visible
   pg_type_is_visible pg_function_is_visible format_type pg_get_expr obj_description col_description shobj_description
   has_table_privilege has_any_column_privilege has_column_privilege has_schema_privilege has_database_privilege
   has_function_privilege pg_get_function_arguments pg_get_function_identity_arguments pg_get_function_result
   pg_get_indexdef pg_get_constraintdef pg_get_viewdef pg_table_size pg_relation_size pg_total_relation_size
   pg_indexes_size pg_size_pretty pg_relation_is_publishable pg_get_statisticsobjdef_columns pg_is_in_recovery
   pg_get_partkeydef`.split(/\s+/),
);

/** How many arguments each catalog function takes in PostgreSQL 15 (another count: no such function there). */
export const CATALOG_FUNCTION_ARGUMENTS: Record<string, readonly number[]> = {
  version: [0],
  current_database: [0],
  current_schema: [0],
  current_schemas: [1],
  pg_is_in_recovery: [0],
  pg_get_userbyid: [1],
  pg_encoding_to_char: [1],
  pg_table_is_visible: [1],
  pg_type_is_visible: [1],
  pg_function_is_visible: [1],
  format_type: [2],
  pg_get_expr: [2, 3],
  obj_description: [1, 2],
  col_description: [2],
  shobj_description: [2],
  has_table_privilege: [2, 3],
  has_any_column_privilege: [2, 3],
  has_column_privilege: [3, 4],
  has_schema_privilege: [2, 3],
  has_database_privilege: [2, 3],
  has_function_privilege: [2, 3],
  pg_get_function_arguments: [1],
  pg_get_function_identity_arguments: [1],
  pg_get_function_result: [1],
  pg_get_indexdef: [1, 3],
  pg_get_constraintdef: [1, 2],
  pg_get_viewdef: [1, 2],
  pg_table_size: [1],
  pg_relation_size: [1, 2],
  pg_total_relation_size: [1],
  pg_indexes_size: [1],
  pg_size_pretty: [1],
  pg_relation_is_publishable: [1],
  pg_get_statisticsobjdef_columns: [1],
  pg_get_partkeydef: [1],
};

/** The name of a call of a catalog function (`pg_catalog.` allowed in front), else null. */
function catalogFunction(call: FuncCall): string | null {
  const parts = fieldNames(call.funcname).map((p) => p.toLowerCase());
  const name = parts.length === 2 && parts[0] === 'pg_catalog' ? parts[1]! : parts.length === 1 ? parts[0]! : null;
  return name !== null && NAMES_OF_CATALOG_FUNCTIONS.has(name) && !call.over && !call.agg_star ? name : null;
}

/** `name` (63 bytes at most) and `"char"` (one byte) would cut values: they stay refused. */
const REG_TYPES = new Set(['regclass', 'regtype', 'regnamespace', 'regproc', 'regprocedure', 'oid']);

/** The last part of a cast's type name when it is one of the catalog's types (and not an array of it). */
function catalogCast(cast: TypeCast): string | null {
  const names = fieldNames(cast.typeName?.names).map((n) => n.toLowerCase());
  const last = names[names.length - 1] ?? '';
  const qualified = names.length === 1 || (names.length === 2 && names[0] === 'pg_catalog');
  return qualified && REG_TYPES.has(last) && !cast.typeName?.arrayBounds ? last : null;
}

/** Rewrites, in place, the catalog functions, casts, value functions and collations of `tree`. */
export function rewriteCatalogCalls(tree: ParseResult, context: CatalogContext): void {
  if (!mentionsCatalog(tree)) return;
  expandArrays(tree);
  nameOutputColumns(tree);
  const rewriter = new CatalogRewriter(context);
  replaceNodesBelow(tree, (node) => rewriter.replace(node));
}

const isExpandArray = (node: Node | undefined): FuncCall | null => {
  const call = asKind(node, 'FuncCall');
  const name = fieldNames(call?.funcname).map((p) => p.toLowerCase());
  return call && name.join('.') === 'information_schema._pg_expandarray' && call.args?.length === 1 ? call : null;
};

/** An int2vector's text (`1 2`, as pg_index.indkey holds it) as an array. */
const vectorArray = (vector: Node): Node => expression("CAST(string_to_array(__vdb_arg0, ' ') AS int[])", [vector]);

/**
 * `information_schema._pg_expandarray(v)`, the set of (x: element, n: position) the JDBC driver
 * reads index keys with: `(f(v)).x` is `unnest(v)` and `(f(v)).n` its positions, set-returning
 * functions of one select list that PostgreSQL and the engine step through together. A whole
 * result named K (`f(v) AS keys`) is `unnest(v)` where every use of K is `(K).x`; another use is
 * refused.
 */
function expandArrays(tree: ParseResult): void {
  const named = new Set<string>();
  const consumed = new Set<object>();
  walk(tree, (kind, node) => {
    if (kind !== 'ResTarget' || !isExpandArray(node.val)) return;
    if (!node.name) throw badRequest('_pg_expandarray is answered in vdb only as (_pg_expandarray(v)).x, .n, or named in a select list.');
    named.add(node.name.toLowerCase());
    node.val = expression('unnest(__vdb_arg0)', [vectorArray(isExpandArray(node.val)!.args![0]!)]);
  });
  const field = (node: Node) => {
    const indirection = asKind(node, 'A_Indirection');
    const names = indirection?.indirection?.map((i) => asKind(i, 'String')?.sval?.toLowerCase());
    return indirection && names?.length === 1 ? { arg: indirection.arg, name: names[0] } : null;
  };
  replaceNodesBelow(tree, (node) => {
    const access = field(node);
    const call = isExpandArray(access?.arg);
    if (call && access?.name === 'x') return expression('unnest(__vdb_arg0)', [vectorArray(call.args![0]!)]);
    if (call && access?.name === 'n') return expression('generate_series(1, cardinality(__vdb_arg0))', [vectorArray(call.args![0]!)]);
    const ref = asKind(access?.arg, 'ColumnRef');
    if (ref && access?.name === 'x' && named.has(fieldNames(ref.fields).at(-1)?.toLowerCase() ?? '')) {
      consumed.add(ref);
      return access!.arg!;
    }
    if (isExpandArray(node))
      throw badRequest('_pg_expandarray is answered in vdb only as (_pg_expandarray(v)).x, .n, or named in a select list.');
    return undefined;
  });
  if (named.size === 0) return;
  walk(tree, (kind, node) => {
    if (kind === 'ColumnRef' && !consumed.has(node) && named.has(fieldNames(node.fields).at(-1)?.toLowerCase() ?? ''))
      throw badRequest('A result of _pg_expandarray is answered in vdb only through its field x.');
  });
}

/** Whether anything in the tree is for this rewrite (most statements: no). */
function mentionsCatalog(tree: ParseResult): boolean {
  let found = false;
  walk(tree, (kind, node) => {
    if (found) return 'skip';
    if (kind === 'FuncCall') found = catalogFunction(node) !== null || isExpandArray({ FuncCall: node }) !== null;
    else if (kind === 'TypeCast') found = catalogCast(node) !== null;
    else if (kind === 'CollateClause') found = isDefaultCollation(node.collname);
    else if (kind === 'SQLValueFunction') found = node.op === 'SVFOP_CURRENT_CATALOG' || node.op === 'SVFOP_CURRENT_SCHEMA';
    else if (kind === 'A_Expr') found = qualifiedOperator(node.name);
  });
  return found;
}

/** `OPERATOR(pg_catalog.~)`: an operator named with its schema, as psql writes them. */
const qualifiedOperator = (name: unknown) => {
  const parts = fieldNames(name);
  return parts.length === 2 && parts[0]!.toLowerCase() === 'pg_catalog';
};

const isDefaultCollation = (names: unknown) => {
  const parts = fieldNames(names).map((n) => n.toLowerCase());
  return parts[parts.length - 1] === 'default' && (parts.length === 1 || parts[0] === 'pg_catalog');
};

/** Output columns keep PostgreSQL's names for what is replaced (`version`, `current_database`, `oid` of `oid::regclass`). */
function nameOutputColumns(tree: ParseResult): void {
  walk(tree, (kind, node) => {
    if (kind !== 'ResTarget' || node.name !== undefined || !isObject(node.val)) return;
    const call = asKind(node.val, 'FuncCall');
    const cast = asKind(node.val, 'TypeCast');
    const value = asKind(node.val, 'SQLValueFunction');
    if (call && catalogFunction(call)) node.name = catalogFunction(call)!;
    else if (cast && catalogCast(cast)) {
      const ref = asKind(cast.arg, 'ColumnRef');
      node.name = ref ? (fieldNames(ref.fields).at(-1) ?? catalogCast(cast)!) : catalogCast(cast)!;
    } else if (value?.op === 'SVFOP_CURRENT_CATALOG') node.name = 'current_catalog';
    else if (value?.op === 'SVFOP_CURRENT_SCHEMA') node.name = 'current_schema';
  });
}

const PLACEHOLDER = /^__vdb_arg(\d+)$/;

/** An expression from SQL text in which `__vdb_arg0`, `__vdb_arg1`, ... stand for `args`. */
function expression(text: string, args: readonly Node[] = []): Node {
  const parsed = parseExpression(text, 'catalog expression');
  const used = new Set<number>();
  const replace = (node: Node): Node | undefined => {
    const ref = asKind(node, 'ColumnRef');
    const match = ref ? PLACEHOLDER.exec(fieldNames(ref.fields).join('.')) : null;
    if (!match) return undefined;
    // The first use is the node itself (calls vdb marked as its own stay marked), later ones copies.
    const index = Number(match[1]);
    if (used.has(index)) return copyOwned(args[index]!);
    used.add(index);
    return args[index]!;
  };
  const holder = { value: parsed };
  replaceNodesBelow(holder, replace);
  return holder.value;
}

const literal = (value: string | number | boolean | null) =>
  value === null ? 'NULL' : typeof value === 'string' ? sqlLiteral(value) : String(value).toUpperCase();

/** `CASE x WHEN k THEN v ... ELSE otherwise END` over constants. */
function caseOf(entries: Array<[number, string | null]>, otherwise: string): string {
  if (entries.length === 0) return otherwise;
  return `CASE __vdb_arg0 ${entries.map(([k, v]) => `WHEN ${k} THEN ${literal(v)}`).join(' ')} ELSE ${otherwise} END`;
}

const constantText = (node: Node | undefined): string | null => {
  const value = asKind(node, 'A_Const') as A_Const | undefined;
  return value?.sval?.sval ?? null;
};

const constantNumber = (node: Node | undefined): number | null => {
  const value = asKind(node, 'A_Const') as A_Const | undefined;
  return value?.ival ? Number(value.ival.ival ?? 0) : null;
};

/** PostgreSQL's quote_ident: bare when lower case letters, digits and underscores. */
const quoteName = (name: string) => (/^[a-z_][a-z0-9_$]*$/.test(name) ? name : `"${name.replaceAll('"', '""')}"`);

/** `schema.table` or `table` (also quoted identifiers) as [schema, table]. */
function splitName(text: string): [string | undefined, string] {
  const parts = [...text.matchAll(/"((?:[^"]|"")*)"|([^."]+)/g)].map((m) =>
    m[1] !== undefined ? m[1].replaceAll('""', '"') : m[2]!.trim().toLowerCase(),
  );
  if (parts.length === 1) return [undefined, parts[0]!];
  if (parts.length === 2) return [parts[0], parts[1]!];
  throw badRequest(`"${text}" is not a relation name.`, 'Write schema.table or table.');
}

class CatalogRewriter {
  private visibleCache: ReturnType<typeof visibleObjects> | null = null;

  constructor(private readonly context: CatalogContext) {}

  private get visible() {
    this.visibleCache ??= visibleObjects(this.context.registry, this.context.policy);
    return this.visibleCache;
  }

  replace(node: Node): Node | undefined {
    const call = asKind(node, 'FuncCall');
    const cast = asKind(node, 'TypeCast');
    const collate = asKind(node, 'CollateClause');
    const value = asKind(node, 'SQLValueFunction');
    if (call && catalogFunction(call)) return this.call(catalogFunction(call)!, this.rewrittenArgs(call.args));
    if (cast && catalogCast(cast)) return this.cast(catalogCast(cast)!, this.rewrittenArgs([cast.arg!])[0]!);
    if (collate && isDefaultCollation(collate.collname)) return this.rewrittenArgs([collate.arg!])[0]!;
    const operator = asKind(node, 'A_Expr');
    if (operator && qualifiedOperator(operator.name)) {
      // pg_catalog's operators are the operators: the name alone, which the allow-list and the translation read.
      operator.name = operator.name!.slice(1);
      return undefined;
    }
    if (value?.op === 'SVFOP_CURRENT_CATALOG') return expression(sqlLiteral(this.context.vdbName));
    if (value?.op === 'SVFOP_CURRENT_SCHEMA') return expression('CAST(NULL AS text)');
    return undefined;
  }

  /** The arguments, with what is for this rewrite inside them rewritten first. */
  private rewrittenArgs(args: Node[] | undefined): Node[] {
    const holder = { args: [...(args ?? [])] };
    replaceNodesBelow(holder, (node) => this.replace(node));
    return holder.args;
  }

  private call(name: string, args: Node[]): Node {
    const counts = CATALOG_FUNCTION_ARGUMENTS[name];
    if (counts && !counts.includes(args.length)) {
      throw badRequest(
        `Function ${name} does not take ${args.length} argument${args.length === 1 ? '' : 's'}.`,
        `${name} takes ${counts.join(' or ')}, as in PostgreSQL.`,
        'Unknown function',
      );
    }
    const simple = this.simpleCall(name, args);
    if (simple) return simple;
    if (name.startsWith('has_')) return this.privilege(name, args);
    return this.definitionCall(name, args);
  }

  /** Calls answered by a constant or a lookup that needs no permission. */
  private simpleCall(name: string, args: Node[]): Node | null {
    switch (name) {
      case 'version':
        return expression(sqlLiteral(VERSION_TEXT));
      case 'current_database':
        return expression(sqlLiteral(this.context.vdbName));
      case 'current_schema':
        // No schema is vdb's default: a bare name means the one table of that name in any schema.
        return expression('CAST(NULL AS text)');
      case 'current_schemas':
        return expression(`CASE WHEN __vdb_arg0 THEN ARRAY['pg_catalog'] ELSE CAST(ARRAY[] AS text[]) END`, args);
      case 'pg_get_userbyid':
        // The role's name as pg_roles shows it to the user; PostgreSQL's text for an id it does not know.
        return expression(
          `COALESCE((SELECT r.rolname FROM pg_catalog.pg_roles r WHERE r.oid = __vdb_arg0), 'unknown (OID=' || CAST(__vdb_arg0 AS text) || ')')`,
          args,
        );
      case 'pg_encoding_to_char':
        return expression(caseOf([[6, 'UTF8']], `''`), args);
      case 'format_type':
        return expression(formatTypeCase(), args);
      case 'pg_get_expr':
        return expression('CAST(__vdb_arg0 AS text)', args);
      case 'pg_type_is_visible':
        return expression(`__vdb_arg0 IN (${PG_TYPES.map((t) => t[0]).join(', ')})`, args);
      case 'pg_is_in_recovery':
      case 'pg_relation_is_publishable':
        return expression('FALSE');
      case 'pg_table_size':
      case 'pg_relation_size':
      case 'pg_total_relation_size':
      case 'pg_indexes_size':
        // vdb does not know how much room a source's table takes.
        return expression('CAST(NULL AS bigint)');
      case 'pg_size_pretty':
        return sizeOfNothing(args[0]);
      case 'pg_get_statisticsobjdef_columns':
      case 'pg_get_partkeydef':
      case 'shobj_description':
      case 'pg_get_function_result':
        return expression('CAST(NULL AS text)');
      default:
        return null;
    }
  }

  /** Calls whose answer depends on what the user sees: visibility, descriptions, definitions. */
  private definitionCall(name: string, args: Node[]): Node {
    const visible = this.visible;
    switch (name) {
      case 'pg_table_is_visible':
        return expression(`__vdb_arg0 IN (${[0, ...this.unqualifiedRelations()].join(', ')})`, args);
      case 'pg_function_is_visible':
        return expression(`__vdb_arg0 IN (${[0, ...visible.procedures.map((p) => p.oid)].join(', ')})`, args);
      case 'obj_description':
        return this.description(args);
      case 'col_description': {
        const columns = visible.tables.flatMap((t) =>
          t.columns
            .filter((c) => c.description)
            .map((c) => `WHEN __vdb_arg0 = ${t.table.oid} AND __vdb_arg1 = ${c.position} THEN ${sqlLiteral(c.description!)}`),
        );
        return expression(columns.length === 0 ? 'CAST(NULL AS text)' : `CASE ${columns.join(' ')} ELSE NULL END`, args);
      }
      case 'pg_get_function_arguments':
      case 'pg_get_function_identity_arguments':
        return expression(caseOf(this.procedureArguments(), 'NULL'), args);
      case 'pg_get_indexdef':
        return this.keyDefinition(
          args,
          (schema, t, keys) =>
            `CREATE UNIQUE INDEX ${quoteName(primaryKeyName(t))} ON ${quoteName(schema)}.${quoteName(t.name)} USING btree (${keys})`,
        );
      case 'pg_get_constraintdef':
        return this.keyDefinition(args, (_schema, _t, keys) => `PRIMARY KEY (${keys})`);
      case 'pg_get_viewdef':
        return expression(
          caseOf(
            visible.tables.filter((t) => 'sql' in t.table).map((t) => [t.table.oid, String((t.table as unknown as { sql: string }).sql)]),
            'NULL',
          ),
          args,
        );
      default:
        throw badRequest(`Function "${name}" is not available in vdb.`);
    }
  }

  /** Relations the user sees whose bare name means them (vdb resolves a bare name unique across schemas). */
  private unqualifiedRelations(): number[] {
    const names = new Map<string, number>();
    const count = (name: string) => names.set(name.toLowerCase(), (names.get(name.toLowerCase()) ?? 0) + 1);
    for (const table of this.context.registry.systemTables()) count(table.name);
    for (const source of this.context.registry.sources) for (const table of source.tables) count(table.name);
    for (const view of this.context.registry.views) count(view.name);
    return this.visible.tables
      .filter((t) => names.get(t.table.name.toLowerCase()) === 1)
      .flatMap((t) => [t.table.oid, t.table.oid + INDEX_OID_BASE]);
  }

  /** obj_description: a CASE over the descriptions the user may see (as pg_description holds them). */
  private description(args: Node[]): Node {
    const catalog = args.length > 1 ? constantText(args[1]) : null;
    if (args.length > 1 && catalog === null)
      throw badRequest('obj_description takes the catalog by name, as a constant.', "Write obj_description(oid, 'pg_class').");
    const which = catalog?.replace(/^pg_catalog\./, '').toLowerCase() ?? null;
    const { tables, schemas } = this.visible;
    const sources = new Map(this.context.registry.sources.map((s) => [s.name, s] as const));
    const procedures = new Map(
      this.context.registry.sources.flatMap((s) => (s.procedures ?? []).map((p) => [p.oid, p.description] as const)),
    );
    const entries: Array<[number, string | null]> = [
      ...(which === null || which === 'pg_class'
        ? tables.map((t): [number, string | null] => [t.table.oid, t.table.description ?? null])
        : []),
      ...(which === null || which === 'pg_namespace'
        ? schemas.map((n): [number, string | null] => [
            n.oid,
            sources.has(n.name) ? sources.get(n.name)!.description : namespaceDescription(n.name),
          ])
        : []),
      ...(which === null || which === 'pg_proc'
        ? this.visible.procedures.map((p): [number, string | null] => [p.oid, procedures.get(p.oid) ?? null])
        : []),
    ];
    const described = entries.filter(([oid, text], i) => text !== null && entries.findIndex(([other]) => other === oid) === i);
    return expression(caseOf(described, 'NULL'), args);
  }

  private procedureArguments(): Array<[number, string]> {
    const byOid = new Map(this.context.registry.sources.flatMap((s) => (s.procedures ?? []).map((p) => [p.oid, p] as const)));
    for (const p of SYSTEM_PROCEDURE_DEFS) byOid.set(p.oid, p);
    return this.visible.procedures.map((p) => [p.oid, procedureArguments(byOid.get(p.oid)?.params ?? [])]);
  }

  /** pg_get_indexdef / pg_get_constraintdef of the primary keys the user sees whole. */
  private keyDefinition(args: Node[], text: (schema: string, table: TableDef, keys: string) => string): Node {
    if (args.length === 3 && constantNumber(args[1]) !== 0)
      throw badRequest('pg_get_indexdef of one column of an index is not available in vdb.', 'Pass 0 as the column, or leave it out.');
    const entries = this.visible.tables
      .filter((t) => t.table.primaryKey.length > 0 && t.table.primaryKey.every((k) => t.columns.some((c) => c.name === k)))
      .map((t): [number, string] => [t.table.oid + INDEX_OID_BASE, text(t.schema, t.table, t.table.primaryKey.map(quoteName).join(', '))]);
    return expression(caseOf(entries, 'NULL'), args);
  }

  /** has_*_privilege: answered from the user's permissions, for the signed-in user only. */
  private privilege(name: string, args: Node[]): Node {
    const arity: Record<string, number> = { has_column_privilege: 3 };
    const own = arity[name] ?? 2;
    if (args.length === own + 1) this.requireSelf(args[0]!);
    else if (args.length !== own) throw badRequest(`${name} takes ${own} or ${own + 1} arguments.`);
    const rest = args.slice(args.length - own);
    const privileges = (constantText(rest[own - 1]) ?? '')
      .toUpperCase()
      .replace(/WITH GRANT OPTION/g, '')
      .split(',')
      .map((p) => p.trim());
    if (privileges.some((p) => p === '')) throw badRequest(`${name} takes its privilege as a constant, e.g. 'SELECT'.`);
    switch (name) {
      case 'has_database_privilege':
        return expression(literal(privileges.some((p) => p === 'CONNECT')));
      case 'has_schema_privilege':
        return this.objectTest(
          rest[0]!,
          this.visible.schemas.map((s) => ({ oid: s.oid, names: [s.name] })),
          privileges.includes('USAGE'),
        );
      case 'has_function_privilege':
        if (constantText(rest[0]) !== null) throw badRequest('has_function_privilege takes the function by its id (pg_proc.oid) in vdb.');
        return this.objectTest(
          rest[0]!,
          this.visible.procedures.map((p) => ({ oid: p.oid, names: [] })),
          privileges.includes('EXECUTE'),
        );
      default:
        return this.tablePrivilege(rest, privileges, name === 'has_column_privilege');
    }
  }

  private requireSelf(user: Node): void {
    const value = asKind(user, 'SQLValueFunction');
    const self =
      (value && ['SVFOP_CURRENT_USER', 'SVFOP_SESSION_USER', 'SVFOP_USER', 'SVFOP_CURRENT_ROLE'].includes(String(value.op))) ||
      constantText(user) === this.context.policy.user.name;
    if (!self) throw badRequest('vdb answers privileges of the signed-in user only.', 'Leave the user out, or pass current_user.');
  }

  /** `x IN (ids)` for an id, TRUE/FALSE for a constant name (unknown: the error PostgreSQL gives). */
  private objectTest(object: Node, objects: Array<{ oid: number; names: string[] }>, granted: boolean): Node {
    const name = constantText(object);
    if (name !== null) {
      if (!objects.some((o) => o.names.some((n) => n.toLowerCase() === name.toLowerCase())))
        throw notFound(`schema "${name}" does not exist`);
      return expression(literal(granted));
    }
    if (!granted) return expression('FALSE');
    return expression(`__vdb_arg0 IN (${[0, ...objects.map((o) => o.oid)].join(', ')})`, [object]);
  }

  private tablePrivilege(args: Node[], privileges: string[], column: boolean): Node {
    const letters: Record<string, Action> = { SELECT: 'R', INSERT: 'C', UPDATE: 'U', DELETE: 'D' };
    const granted = (schema: string, table: TableDef) =>
      privileges.some((p) => {
        const letter = letters[p];
        if (letter === 'R') return true;
        const source = this.context.registry.sources.find((s) => s.name === schema);
        return (
          letter !== undefined &&
          source !== undefined &&
          !source.readOnly &&
          writableKind(source.kind) &&
          table.kind !== 'View' &&
          this.context.policy.allows(letter, [schema, table.name])
        );
      });
    const tables = this.visible.tables.filter((t) => granted(t.schema, t.table));
    const name = constantText(args[0]);
    if (name !== null) {
      const [schema, table] = splitName(name);
      const found = this.visible.tables.find(
        (t) =>
          t.table.name.toLowerCase() === table.toLowerCase() && (schema === undefined || t.schema.toLowerCase() === schema.toLowerCase()),
      );
      if (!found) throw notFound(`relation "${name}" does not exist`, null, 'Unknown table');
      const columnName = column ? constantText(args[1]) : null;
      const columnOk = !column || found.columns.some((c) => c.name.toLowerCase() === (columnName ?? '').toLowerCase());
      return expression(literal(tables.includes(found) && columnOk));
    }
    if (column)
      throw badRequest(
        'has_column_privilege takes the table by name here.',
        "Write has_column_privilege('schema.table', 'column', 'SELECT').",
      );
    return expression(`__vdb_arg0 IN (${[0, ...tables.map((t) => t.table.oid)].join(', ')})`, [args[0]!]);
  }

  /** Casts to the catalog's types: a name to its id (`'shop.orders'::regclass`), an id to its name. */
  private cast(type: string, arg: Node): Node {
    const text = constantText(arg);
    switch (type) {
      case 'oid':
        // An oid is an unsigned 32-bit number; PostgreSQL reads a negative int4 as its two's complement.
        return withFailure(
          `CASE WHEN __vdb_arg0 IS NULL THEN NULL WHEN __vdb_arg0 BETWEEN 0 AND 4294967295 THEN __vdb_arg0
            WHEN __vdb_arg0 BETWEEN -2147483648 AND -1 THEN __vdb_arg0 + 4294967296 ELSE __vdb_failure END`,
          [expression('CAST(__vdb_arg0 AS bigint)', [arg])],
          'value is out of range for type oid',
        );
      case 'regclass':
        if (text === null && isTextExpression(arg)) return this.relationOidOfText(arg);
        return text !== null
          ? expression(String(this.relationOid(text)))
          : expression(caseOf(this.relationNames(), 'CAST(__vdb_arg0 AS text)'), [arg]);
      case 'regtype':
        return text !== null ? expression(String(typeOid(text))) : expression(formatTypeCase(), [arg, expression('NULL')]);
      case 'regnamespace':
        return expression(
          caseOf(
            this.visible.schemas.map((s) => [s.oid, quoteName(s.name)]),
            'CAST(__vdb_arg0 AS text)',
          ),
          [arg],
        );
      default:
        return expression(
          caseOf(
            this.visible.procedures.map((p) => [p.oid, p.name]),
            'CAST(__vdb_arg0 AS text)',
          ),
          [arg],
        );
    }
  }

  /** The id of a relation by its name, as `'name'::regclass` finds it: an unknown or hidden one does not exist. */
  private relationOid(text: string): number {
    const [schema, table] = splitName(text);
    let resolved;
    try {
      resolved = this.context.registry.resolve(schema ?? (table.startsWith('pg_') ? 'pg_catalog' : undefined), table);
    } catch {
      throw notFound(`relation "${text}" does not exist`, null, 'Unknown table');
    }
    const seen = resolved.origin === 'system' || this.visible.tables.some((t) => t.table === resolved.table);
    if (!seen) throw notFound(`relation "${text}" does not exist`, null, 'Unknown table');
    return resolved.table.oid;
  }

  /**
   * The id of a relation named by a text computed while the statement runs (Metabase's
   * `format('%I.%I', schema, table)::regclass`): a CASE over the names the user sees, failing as
   * PostgreSQL does for another.
   */
  private relationOidOfText(arg: Node): Node {
    const unqualified = new Set(this.unqualifiedRelations());
    const entries = this.visible.tables.flatMap((t): Array<[string, number]> => {
      const qualified: [string, number] = [`${quoteName(t.schema)}.${quoteName(t.table.name)}`, t.table.oid];
      return unqualified.has(t.table.oid) ? [qualified, [quoteName(t.table.name), t.table.oid]] : [qualified];
    });
    return withFailure(this.textLookup(arg, entries), [], 'relation does not exist (the text cast to regclass names none you may read)');
  }

  /**
   * The CASE finding a relation's id by its name; `format('%I.%I', schema, table)` (each part
   * quoted as an identifier, read back as the part itself) compares the parts themselves.
   */
  private textLookup(arg: Node, entries: Array<[string, number]>): Node {
    const call = asKind(arg, 'FuncCall');
    const parts =
      call && fieldNames(call.funcname).at(-1)?.toLowerCase() === 'format' && constantText(call.args?.[0]) === '%I.%I'
        ? call.args!.slice(1)
        : null;
    if (parts?.length === 2) {
      const cases = this.visible.tables
        .map((t) => `WHEN __vdb_arg0 = ${sqlLiteral(t.schema)} AND __vdb_arg1 = ${sqlLiteral(t.table.name)} THEN ${t.table.oid}`)
        .join(' ');
      return expression(cases === '' ? '__vdb_failure' : `CASE ${cases} ELSE __vdb_failure END`, parts);
    }
    const cases = entries.map(([name, oid]) => `WHEN ${sqlLiteral(name)} THEN ${oid}`).join(' ');
    const lookup = entries.length > 0 ? `CASE __vdb_arg0 ${cases} ELSE __vdb_failure END` : '__vdb_failure';
    return expression(`CASE WHEN __vdb_arg0 IS NULL THEN NULL ELSE ${lookup} END`, [arg]);
  }

  /** Each visible relation's name as regclass writes it: bare where the bare name means it, else qualified. */
  private relationNames(): Array<[number, string]> {
    const unqualified = new Set(this.unqualifiedRelations());
    return this.visible.tables.flatMap((t): Array<[number, string]> => {
      const bare = unqualified.has(t.table.oid);
      const name = (relation: string) => (bare ? quoteName(relation) : `${quoteName(t.schema)}.${quoteName(relation)}`);
      const index: Array<[number, string]> =
        t.table.primaryKey.length > 0 ? [[t.table.oid + INDEX_OID_BASE, name(primaryKeyName(t.table))]] : [];
      return [[t.table.oid, name(t.table.name)], ...index];
    });
  }
}

/** The description pg_namespace gives a schema that is not a source's. */
const namespaceDescription = (name: string) =>
  (PG_SCHEMAS as readonly string[]).includes(name) || SYSTEM_SCHEMAS.includes(name as never) ? 'System schema' : 'Virtual schema (views)';

/**
 * An expression (text, or one already built) in which `__vdb_failure` is the engine's error()
 * with `message`: allowed there only, since vdb wrote the call (vdbOwn).
 */
function withFailure(text: string | Node, args: Node[], message: string): Node {
  const holder = { value: typeof text === 'string' ? expression(text, args) : text };
  const failure = (): Node => ({
    FuncCall: vdbOwn({
      funcname: [nameNode('error')],
      args: [{ A_Const: { sval: { sval: message } } }],
      funcformat: 'COERCE_EXPLICIT_CALL',
    }),
  });
  replaceNodesBelow(holder, (node) =>
    fieldNames(asKind(node, 'ColumnRef')?.fields).join('.') === '__vdb_failure' ? failure() : undefined,
  );
  return holder.value;
}

/** Whether a cast's operand is text by its form (a call that makes text, `||`, a cast to text), not an id. */
function isTextExpression(node: Node): boolean {
  const call = asKind(node, 'FuncCall');
  if (call)
    return ['format', 'concat', 'concat_ws', 'quote_ident', 'lower', 'upper'].includes(
      fieldNames(call.funcname).at(-1)?.toLowerCase() ?? '',
    );
  const operator = asKind(node, 'A_Expr');
  if (operator) return fieldNames(operator.name).at(-1) === '||';
  const cast = asKind(node, 'TypeCast');
  return cast !== undefined && ['text', 'varchar'].includes(fieldNames(cast.typeName?.names).at(-1)?.toLowerCase() ?? '');
}

/** format_type(type, typmod) as a CASE over the types vdb knows; `???` for another, as PostgreSQL writes an unknown one. */
function formatTypeCase(): string {
  const modified = (oid: number, name: string, suffix = '') =>
    `WHEN __vdb_arg0 = ${oid} AND __vdb_arg1 >= 4 THEN '${name}(' || CAST((__vdb_arg1 - 4) / 65536 AS text) || ',' || CAST((__vdb_arg1 - 4) % 65536 AS text) || ')${suffix}'`;
  const plain = PG_TYPES.map(([oid]) => `WHEN ${oid} THEN ${literal(formatType(oid, null))}`).join(' ');
  return `CASE WHEN __vdb_arg0 IS NULL THEN NULL ${modified(1700, 'numeric')} ${modified(1231, 'numeric', '[]')}
    WHEN __vdb_arg0 = 1043 AND __vdb_arg1 >= 4 THEN 'character varying(' || CAST(__vdb_arg1 - 4 AS text) || ')'
    ELSE CASE __vdb_arg0 ${plain} ELSE '???' END END`;
}

/** A type's id by name (`integer`, `int4`, `pg_catalog.text`), as `'integer'::regtype` finds it. */
function typeOid(text: string): number {
  const name = text
    .toLowerCase()
    .replace(/^pg_catalog\./, '')
    .trim();
  const found = PG_TYPES.find((t) => t[1] === name || t[9] === name);
  if (!found) throw notFound(`type "${text}" does not exist`, null, 'Unknown type');
  return found[0];
}

/** pg_size_pretty of the sizes vdb does not know (NULL); of anything else it is not available. */
function sizeOfNothing(arg: Node | undefined): Node {
  const value = asKind(arg, 'TypeCast');
  const isNull = value && asKind(value.arg, 'A_Const')?.isnull;
  if (!isNull) throw badRequest('pg_size_pretty is available in vdb only over pg_table_size and its kind, which vdb answers with NULL.');
  return expression('CAST(NULL AS text)');
}
