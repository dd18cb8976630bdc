/**
 * PostgreSQL's catalog (`pg_catalog`) over vdb's: the relations psql, JDBC and BI tools read to
 * list schemas, tables, columns, keys and procedures. Computed from the catalog like the SYS
 * tables (system-tables.ts), copied into the engine with them (system-copies.ts) and narrowed
 * per user by the access rewrite (engine/access/catalog-visibility.ts). Object ids are vdb's
 * own (SYS.Tables' OID); a primary key's index and constraint get the table's id plus
 * INDEX_OID_BASE. Relations with nothing to hold in vdb (policies, publications, inheritance)
 * are there, empty, because clients read them.
 */
import type { CatalogData, TableDef } from '../catalog/types.js';
import { catalogViews, materializedCopyOf } from '../catalog/materialized-views.js';
import { formatType, PG_TYPES, pgColumnType, typeName } from './pg-types.js';
import { allProcedures, allTables, SYSTEM_SCHEMAS, systemTable, type SystemTable, type SystemValue } from './system-tables.js';

/** The schemas of PostgreSQL's catalog: queryable like the system schemas, never listed among them. */
export const PG_SCHEMAS = ['pg_catalog', 'information_schema'] as const;

/** The role that owns every object (pg_roles, pg_get_userbyid): the bootstrap superuser's id, 10, as in PostgreSQL. */
export const OWNER_OID = 10;
export const OWNER_NAME = 'vdb';
/** A primary key's index and constraint: the table's id plus this. */
export const INDEX_OID_BASE = 1_000_000_000;
/** pg_database's one database. */
export const DATABASE_OID = 1;

/** The ids of the system schemas and PostgreSQL's (pg_catalog 11 as in PostgreSQL). */
export const SYSTEM_NAMESPACE_OIDS: Record<string, number> = { SYS: 1, SYSADMIN: 2, SYSLOG: 3, pg_catalog: 11, information_schema: 13 };

/** Every schema as pg_namespace lists it: the system schemas, PostgreSQL's, the sources, the virtual schemas. */
export function namespaces(catalog: CatalogData): Array<{ name: string; oid: number; description: string | null }> {
  const virtual = new Map<string, number>();
  for (const view of catalogViews(catalog)) virtual.set(view.schema, Math.min(virtual.get(view.schema) ?? view.oid, view.oid));
  return [
    ...[...SYSTEM_SCHEMAS, ...PG_SCHEMAS].map((name) => ({
      name: name as string,
      oid: SYSTEM_NAMESPACE_OIDS[name]!,
      description: 'System schema',
    })),
    ...catalog.sources.map((s) => ({ name: s.name, oid: s.oid, description: s.description })),
    ...[...virtual].map(([name, oid]) => ({ name, oid, description: 'Virtual schema (views)' })),
  ];
}

const namespaceOids = (catalog: CatalogData) => new Map(namespaces(catalog).map((n) => [n.name, n.oid]));

/** The primary key's index name PostgreSQL would give it. */
export const primaryKeyName = (table: TableDef) => `${table.name}_pkey`;

const isTextual = (oid: number) => oid === 25 || oid === 1043 || oid === 1009;

const column = (name: string, type = 'VARCHAR'): [string, string] => [name, type];
const columns = (spec: string): Array<[string, string]> =>
  spec
    .trim()
    .split(/\s+/)
    .map((entry) => {
      const [name, type] = entry.split(':');
      return column(
        name!,
        { i: 'INTEGER', b: 'BOOLEAN', s: 'SMALLINT', f: 'REAL', t: 'VARCHAR', ta: 'VARCHAR[]', sa: 'SMALLINT[]', ia: 'INTEGER[]' }[
          type ?? 't'
        ]!,
      );
    });

const pg = (name: string, spec: string, rows: SystemTable['rows']) =>
  systemTable('pg_catalog', name, `PostgreSQL's ${name}.`, columns(spec), rows);
const empty = (name: string, spec: string) => pg(name, spec, () => []);

const relationRow = (
  oid: number,
  name: string,
  namespace: number,
  kind: string,
  am: number,
  natts: number,
  hasIndex: boolean,
): SystemValue[] => [
  oid,
  name,
  namespace,
  0,
  0,
  OWNER_OID,
  am,
  0,
  0,
  0,
  -1,
  0,
  0,
  hasIndex,
  false,
  'p',
  kind,
  natts,
  0,
  false,
  false,
  false,
  false,
  false,
  true,
  'd',
  false,
  0,
  null,
  null,
  null,
];

export const PG_CLASS = pg(
  'pg_class',
  `oid:i relname relnamespace:i reltype:i reloftype:i relowner:i relam:i relfilenode:i reltablespace:i relpages:i reltuples:f
   relallvisible:i reltoastrelid:i relhasindex:b relisshared:b relpersistence relkind relnatts:s relchecks:s relhasrules:b
   relhastriggers:b relhassubclass:b relrowsecurity:b relforcerowsecurity:b relispopulated:b relreplident relispartition:b
   relrewrite:i relacl:ta reloptions:ta relpartbound`,
  ({ catalog }) => {
    const ns = namespaceOids(catalog);
    return allTables(catalog).flatMap(({ schema, table }) => {
      const view = table.kind === 'View';
      const own = relationRow(
        table.oid,
        table.name,
        ns.get(schema)!,
        // PostgreSQL's kinds: a materialized view is 'm'.
        materializedCopyOf(table) ? 'm' : view ? 'v' : 'r',
        view ? 0 : 2,
        table.columns.length,
        table.primaryKey.length > 0,
      );
      if (table.primaryKey.length === 0) return [own];
      return [
        own,
        relationRow(table.oid + INDEX_OID_BASE, primaryKeyName(table), ns.get(schema)!, 'i', 403, table.primaryKey.length, false),
      ];
    });
  },
);

export const PG_NAMESPACE = pg('pg_namespace', 'oid:i nspname nspowner:i nspacl:ta', ({ catalog }) =>
  namespaces(catalog).map((n): SystemValue[] => [n.oid, n.name, OWNER_OID, null]),
);

export const PG_ATTRIBUTE = pg(
  'pg_attribute',
  `attrelid:i attname atttypid:i attstattarget:i attlen:s attnum:s attndims:i attcacheoff:i atttypmod:i attbyval:b attalign
   attstorage attcompression attnotnull:b atthasdef:b atthasmissing:b attidentity attgenerated attisdropped:b attislocal:b
   attinhcount:i attcollation:i attacl:ta attoptions:ta attfdwoptions:ta`,
  ({ catalog }) =>
    allTables(catalog).flatMap(({ table }) =>
      table.columns.map((c): SystemValue[] => {
        const type = pgColumnType(c.type);
        const row = PG_TYPES.find((t) => t[0] === type.oid);
        return [
          table.oid,
          c.name,
          type.oid,
          -1,
          row?.[2] ?? -1,
          c.position,
          row?.[4] === 'A' ? 1 : 0,
          -1,
          type.typmod,
          row?.[3] ?? false,
          row?.[7] ?? 'i',
          row?.[8] ?? 'x',
          '',
          !c.nullable,
          false,
          false,
          '',
          '',
          false,
          true,
          0,
          isTextual(type.oid) ? 100 : 0,
          null,
          null,
          null,
        ];
      }),
    ),
);

export const PG_TYPE = pg(
  'pg_type',
  `oid:i typname typnamespace:i typowner:i typlen:s typbyval:b typtype typcategory typispreferred:b typisdefined:b typdelim
   typrelid:i typsubscript typelem:i typarray:i typinput typoutput typreceive typsend typmodin typmodout typanalyze typalign
   typstorage typnotnull:b typbasetype:i typtypmod:i typndims:i typcollation:i typdefaultbin typdefault typacl:ta`,
  () =>
    PG_TYPES.map(([oid, name, len, byval, category, elem, array, align, storage, , input]): SystemValue[] => {
      const io = (suffix: string) => (input === 'array_in' ? `array_${suffix}` : input.replace(/_?in$/, (m) => m.replace('in', suffix)));
      return [
        oid,
        name,
        11,
        OWNER_OID,
        len,
        byval,
        'b',
        category,
        false,
        true,
        ',',
        0,
        elem === 0 ? '-' : 'array_subscript_handler',
        elem,
        array,
        input,
        io('out'),
        io('recv'),
        io('send'),
        '-',
        '-',
        '-',
        align,
        storage,
        false,
        0,
        -1,
        0,
        isTextual(oid) ? 100 : 0,
        null,
        null,
        null,
      ];
    }),
);

/** Primary keys: one index and one constraint per table that has one. */
const keyed = (catalog: CatalogData) => allTables(catalog).filter(({ table }) => table.primaryKey.length > 0);
const keyPositions = (table: TableDef) => table.primaryKey.map((name) => table.columns.find((c) => c.name === name)?.position ?? 0);

export const PG_INDEX = pg(
  'pg_index',
  `indexrelid:i indrelid:i indnatts:s indnkeyatts:s indisunique:b indnullsnotdistinct:b indisprimary:b indisexclusion:b
   indimmediate:b indisclustered:b indisvalid:b indcheckxmin:b indisready:b indislive:b indisreplident:b indkey indcollation
   indclass indoption indexprs indpred`,
  ({ catalog }) =>
    keyed(catalog).map(({ table }): SystemValue[] => {
      const keys = keyPositions(table);
      // int2vector and oidvector as PostgreSQL writes them: numbers separated by spaces.
      return [
        table.oid + INDEX_OID_BASE,
        table.oid,
        keys.length,
        keys.length,
        true,
        false,
        true,
        false,
        true,
        false,
        true,
        false,
        true,
        true,
        false,
        keys.join(' '),
        keys.map(() => 0).join(' '),
        keys.map(() => 1978).join(' '),
        keys.map(() => 0).join(' '),
        null,
        null,
      ];
    }),
);

export const PG_CONSTRAINT = pg(
  'pg_constraint',
  `oid:i conname connamespace:i contype condeferrable:b condeferred:b convalidated:b conrelid:i contypid:i conindid:i
   conparentid:i confrelid:i confupdtype confdeltype confmatchtype conislocal:b coninhcount:i connoinherit:b conkey:sa
   confkey:sa conbin`,
  ({ catalog }) => {
    const ns = namespaceOids(catalog);
    return keyed(catalog).map(({ schema, table }): SystemValue[] => [
      table.oid + INDEX_OID_BASE,
      primaryKeyName(table),
      ns.get(schema)!,
      'p',
      false,
      false,
      true,
      table.oid,
      0,
      table.oid + INDEX_OID_BASE,
      0,
      0,
      ' ',
      ' ',
      ' ',
      true,
      0,
      true,
      keyPositions(table),
      null,
      null,
    ]);
  },
);

export const PG_PROC = pg(
  'pg_proc',
  `oid:i proname pronamespace:i proowner:i prolang:i procost:f prorows:f provariadic:i prosupport prokind prosecdef:b
   proleakproof:b proisstrict:b proretset:b provolatile proparallel pronargs:s pronargdefaults:s prorettype:i proargtypes
   proallargtypes:ia proargmodes:ta proargnames:ta proargdefaults protrftypes:ia prosrc probin prosqlbody proconfig:ta proacl:ta`,
  ({ catalog }) => {
    const ns = namespaceOids(catalog);
    return allProcedures(catalog).map(({ schema, procedure: p }): SystemValue[] => [
      p.oid,
      p.name,
      ns.get(schema)!,
      OWNER_OID,
      0,
      100,
      p.returnsSet ? 1000 : 0,
      0,
      '-',
      'p',
      false,
      false,
      false,
      p.returnsSet,
      'v',
      'u',
      p.params.length,
      p.params.filter((a) => a.optional).length,
      2249,
      p.params.map((a) => pgColumnType(a.type).oid).join(' '),
      null,
      null,
      p.params.map((a) => a.name),
      null,
      null,
      p.nameInSource,
      null,
      null,
      null,
      null,
    ]);
  },
);

/** `name type, name type` of a procedure's parameters, as pg_get_function_arguments writes them. */
export function procedureArguments(params: ReadonlyArray<{ name: string; type: string; optional: boolean }>): string {
  return params
    .map((a) => {
      const type = pgColumnType(a.type);
      return `${a.name} ${formatType(type.oid, type.typmod) ?? typeName(type.oid)}${a.optional ? ' DEFAULT NULL' : ''}`;
    })
    .join(', ');
}

export const PG_DESCRIPTION = pg('pg_description', 'objoid:i classoid:i objsubid:i description', ({ catalog }) => [
  ...allTables(catalog).flatMap(({ table }) => [
    ...(table.description ? [[table.oid, PG_CLASS.def.oid, 0, table.description]] : []),
    ...table.columns.filter((c) => c.description).map((c) => [table.oid, PG_CLASS.def.oid, c.position, c.description!]),
  ]),
  ...namespaces(catalog)
    .filter((n) => n.description)
    .map((n) => [n.oid, PG_NAMESPACE.def.oid, 0, n.description!]),
  ...allProcedures(catalog)
    .filter(({ procedure }) => procedure.description)
    .map(({ procedure: p }) => [p.oid, PG_PROC.def.oid, 0, p.description!]),
]);

export const PG_DATABASE = pg(
  'pg_database',
  `oid:i datname datdba:i encoding:i datlocprovider datistemplate:b datallowconn:b datconnlimit:i datcollate datctype
   daticulocale datcollversion datacl:ta`,
  ({ vdbName }) => [[DATABASE_OID, vdbName, OWNER_OID, 6, 'c', false, true, -1, 'C', 'C', null, null, null]],
);

/** Users and roles get ids from 20000 up, in the catalog's order (pg_roles). */
export const ROLE_OID_BASE = 20_000;

export const PG_ROLES = pg(
  'pg_roles',
  `rolname rolsuper:b rolinherit:b rolcreaterole:b rolcreatedb:b rolcanlogin:b rolreplication:b rolconnlimit:i rolpassword
   rolvaliduntil rolbypassrls:b rolconfig:ta oid:i`,
  ({ catalog }) => {
    const role = (name: string, login: boolean, oid: number): SystemValue[] => [
      name,
      false,
      true,
      false,
      false,
      login,
      false,
      -1,
      '********',
      null,
      false,
      null,
      oid,
    ];
    const roles = ['admin', ...(catalog.roles ?? [])];
    return [
      role(OWNER_NAME, false, OWNER_OID),
      ...catalog.users.map((u, i) => role(u.name, true, ROLE_OID_BASE + i)),
      ...roles.map((r, i) => role(r, false, ROLE_OID_BASE + catalog.users.length + i)),
    ];
  },
);

export const PG_AM = pg('pg_am', 'oid:i amname amhandler amtype', () => [
  [2, 'heap', 'heap_tableam_handler', 't'],
  [403, 'btree', 'bthandler', 'i'],
]);

export const PG_COLLATION = pg(
  'pg_collation',
  'oid:i collname collnamespace:i collowner:i collprovider collisdeterministic:b collencoding:i collcollate collctype colliculocale collversion',
  () => [
    [100, 'default', 11, OWNER_OID, 'd', true, -1, null, null, null, null],
    [950, 'C', 11, OWNER_OID, 'c', true, -1, 'C', 'C', null, null],
    [951, 'POSIX', 11, OWNER_OID, 'c', true, -1, 'POSIX', 'POSIX', null, null],
  ],
);

/**
 * Settings no session changes (`context` internal): a session's own settings (SET) are read with
 * SHOW, which answers them per session; pg_settings would show one value for all.
 */
export const PG_SETTINGS = pg(
  'pg_settings',
  `name setting unit category short_desc extra_desc context vartype source min_val max_val enumvals:ta boot_val reset_val
   sourcefile sourceline:i pending_restart:b`,
  () =>
    (
      [
        ['block_size', '8192', 'integer'],
        ['integer_datetimes', 'on', 'bool'],
        ['lc_collate', 'C', 'string'],
        ['lc_ctype', 'C', 'string'],
        ['max_function_args', '100', 'integer'],
        ['max_identifier_length', '63', 'integer'],
        ['max_index_keys', '32', 'integer'],
        ['server_encoding', 'UTF8', 'string'],
        ['server_version', '15.0', 'string'],
        ['server_version_num', '150000', 'integer'],
      ] as const
    ).map(([name, setting, type]): SystemValue[] => [
      name,
      setting,
      null,
      'Preset Options',
      null,
      null,
      'internal',
      type,
      'default',
      null,
      null,
      null,
      setting,
      setting,
      null,
      null,
      false,
    ]),
);

export const PG_CATALOG_TABLES: SystemTable[] = [
  PG_SETTINGS,
  PG_CLASS,
  PG_NAMESPACE,
  PG_ATTRIBUTE,
  PG_TYPE,
  PG_INDEX,
  PG_CONSTRAINT,
  PG_PROC,
  PG_DESCRIPTION,
  PG_DATABASE,
  PG_ROLES,
  PG_AM,
  PG_COLLATION,
  // Nothing of vdb is one of these; psql's \d reads them.
  empty('pg_attrdef', 'oid:i adrelid:i adnum:s adbin'),
  empty('pg_inherits', 'inhrelid:i inhparent:i inhseqno:i inhdetachpending:b'),
  empty('pg_policy', 'oid:i polname polrelid:i polcmd polpermissive:b polroles:ia polqual polwithcheck'),
  empty('pg_statistic_ext', 'oid:i stxrelid:i stxname stxnamespace:i stxowner:i stxstattarget:i stxkeys stxkind:ta stxexprs'),
  empty('pg_publication', 'oid:i pubname pubowner:i puballtables:b pubinsert:b pubupdate:b pubdelete:b pubtruncate:b pubviaroot:b'),
  empty('pg_publication_namespace', 'oid:i pnpubid:i pnnspid:i'),
  empty('pg_publication_rel', 'oid:i prpubid:i prrelid:i prqual prattrs:sa'),
  empty('pg_depend', 'classid:i objid:i objsubid:i refclassid:i refobjid:i refobjsubid:i deptype'),
  empty('pg_extension', 'oid:i extname extowner:i extnamespace:i extrelocatable:b extversion extconfig:ia extcondition:ta'),
  empty(
    'pg_trigger',
    'oid:i tgrelid:i tgparentid:i tgname tgfoid:i tgtype:s tgenabled tgisinternal:b tgconstrrelid:i tgconstrindid:i tgconstraint:i tgdeferrable:b tginitdeferred:b tgnargs:s tgattr tgargs tgqual tgoldtable tgnewtable',
  ),
];
