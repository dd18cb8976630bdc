/**
 * Every system table a statement may read: vdb's own (SYS, SYSADMIN, SYSLOG: system-tables.ts)
 * and PostgreSQL's catalog over vdb's (pg_catalog, information_schema). Only vdb's own are
 * listed by SYS.Tables and the REST API's schemas; PostgreSQL's are there for its clients.
 */
import { INFORMATION_SCHEMA_TABLES } from './information-schema.js';
import { PG_CATALOG_TABLES, PG_SCHEMAS } from './pg-catalog.js';
import { SYSTEM_SCHEMAS, SYSTEM_TABLES, type SystemTable } from './system-tables.js';

export const QUERYABLE_SYSTEM_TABLES: readonly SystemTable[] = [...SYSTEM_TABLES, ...PG_CATALOG_TABLES, ...INFORMATION_SCHEMA_TABLES];

export const QUERYABLE_SYSTEM_SCHEMAS: readonly string[] = [...SYSTEM_SCHEMAS, ...PG_SCHEMAS];

/** Tables a bare name may mean: PostgreSQL's pg_catalog is always on its search path, information_schema is not. */
export const UNQUALIFIED_SYSTEM_TABLES: readonly SystemTable[] = QUERYABLE_SYSTEM_TABLES.filter((t) => t.schema !== 'information_schema');
