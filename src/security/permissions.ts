/**
 * Permissions: what each role may do with each object, and what a user's roles add up to.
 *
 * A permission entry (SYSADMIN.setPermissions) gives a role some of the letters C R U D E A
 * (CREATE, READ, UPDATE, DELETE, EXECUTE, ALTER) on a resource: `*` (everything), `schema`,
 * `schema.table`, `schema.table.column` or, for procedures, `SYSADMIN.procedure`. For each role
 * the most specific entry decides (a column's entry over its table's, a table's over its
 * schema's, a schema's over `*`), so a column entry without R hides that column from a role
 * that may read the table. A user may do what any of their roles may; the admin role may do
 * everything and sees everything unfiltered and unmasked.
 *
 * A table entry may carry a row condition (a SQL predicate over the table's columns): a role
 * whose grant carries one sees only the rows it holds. A user with several granting roles sees
 * the rows any of them sees (conditions are ORed; a grant without condition sees every row).
 * A column entry may carry a mask (an expression replacing the column's value), optionally
 * applied only where its condition holds; masks of several roles apply in descending
 * maskOrder, the first whose condition holds wins.
 */
import type { ColumnDef, PermissionDef, TableDef, UserDef } from '../catalog/types.js';
import { badRequest, forbidden, type ApiError } from '../errors.js';
import { ADMIN_ROLE } from './users.js';

export type Action = 'C' | 'R' | 'U' | 'D' | 'E' | 'A';

export const ACTION_NAMES: Record<Action, string> = {
  C: 'CREATE',
  R: 'READ',
  U: 'UPDATE',
  D: 'DELETE',
  E: 'EXECUTE',
  A: 'ALTER',
};

const LETTERS = 'CRUDEA';

/** The letters of a permissions argument in canonical order ('rc' -> 'CR'); 400 for others. */
export function canonicalPermissions(text: string): string {
  const upper = text.toUpperCase().replace(/\s+/g, '');
  // The one permission name spelled in these letters: 'read' would grant R, E, A and D.
  if (upper === 'READ') {
    throw badRequest(
      `"${text}" looks like a word; permissions are letters.`,
      "Use letters of C, R, U, D, E, A, e.g. 'R' for READ or 'CRUD'.",
      'Invalid permissions',
    );
  }
  const unknown = [...upper].filter((ch) => !LETTERS.includes(ch));
  if (unknown.length > 0) {
    throw badRequest(
      `"${text}" is not a set of permissions.`,
      "Use letters of C (CREATE), R (READ), U (UPDATE), D (DELETE), E (EXECUTE), A (ALTER), e.g. 'R' or 'CRUD'; NULL removes the entry.",
      'Invalid permissions',
    );
  }
  return [...LETTERS].filter((ch) => upper.includes(ch)).join('');
}

/**
 * The parts of a resource name: [] for `*`, else schema, table, column. Parts may be quoted
 * with double quotes (a table named "a.b"); `schema.*` means the schema.
 */
export function parseResource(text: string): string[] {
  const trimmed = text.trim();
  if (trimmed === '*') return [];
  const parts: string[] = [];
  let i = 0;
  while (i <= trimmed.length) {
    let part = '';
    if (trimmed[i] === '"') {
      i++;
      while (i < trimmed.length && !(trimmed[i] === '"' && trimmed[i + 1] !== '"')) {
        part += trimmed[i];
        i += trimmed[i] === '"' ? 2 : 1;
      }
      if (trimmed[i] !== '"') throw invalidResource(text);
      i++;
    } else {
      while (i < trimmed.length && trimmed[i] !== '.') part += trimmed[i++];
      part = part.trim();
    }
    if (part === '') throw invalidResource(text);
    parts.push(part);
    if (i >= trimmed.length) break;
    if (trimmed[i] !== '.') throw invalidResource(text);
    i++;
  }
  if (parts.length > 1 && parts[parts.length - 1] === '*') parts.pop();
  if (parts.length === 0 || parts.length > 3) throw invalidResource(text);
  return parts;
}

const invalidResource = (text: string) =>
  badRequest(
    `"${text}" is not a resource name.`,
    "Name '*', a schema, schema.table or schema.table.column (quote parts with dots in double quotes).",
    'Invalid resource',
  );

/** The lookup key of a resource path: names are case-insensitive. */
const keyOf = (path: readonly string[]) => (path.length === 0 ? '*' : path.map((p) => p.toLowerCase()).join('\u0000'));

/** A readable name of a resource path, for messages. */
export const resourceLabel = (path: readonly string[]) => (path.length === 0 ? '*' : path.join('.'));

/** One user's access, computed once per statement from the catalog's permission entries. */
export class AccessPolicy {
  readonly admin: boolean;
  /** Per role of the user: resource key -> entry. */
  private readonly entries: Array<Map<string, PermissionDef>>;
  private readonly userEntries: PermissionDef[];

  constructor(
    readonly user: UserDef,
    permissions: readonly PermissionDef[],
  ) {
    this.admin = user.roles.includes(ADMIN_ROLE);
    this.userEntries = permissions.filter((p) => user.roles.includes(p.role));
    this.entries = user.roles.map((role) => {
      const map = new Map<string, PermissionDef>();
      for (const entry of permissions) if (entry.role === role) map.set(keyOf(parseResource(entry.resource)), entry);
      return map;
    });
  }

  /** The deciding entry of one role for `path`: the most specific one that exists. */
  private decidingEntry(role: Map<string, PermissionDef>, path: readonly string[]): PermissionDef | undefined {
    for (let length = path.length; length >= 0; length--) {
      const entry = role.get(keyOf(path.slice(0, length)));
      if (entry) return entry;
    }
    return undefined;
  }

  /** Whether the user may do `action` on the object at `path` (its own entries, not its parts'). */
  allows(action: Action, path: readonly string[]): boolean {
    if (this.admin) return true;
    return this.entries.some((role) => this.decidingEntry(role, path)?.permissions.includes(action) ?? false);
  }

  /** A 403 naming the object and the permission when the user may not do `action` on it. */
  require(action: Action, path: readonly string[], what = 'table'): void {
    if (!this.allows(action, path)) throw this.denial(action, path, what);
  }

  /** The 403 of a missing permission. */
  denial(action: Action, path: readonly string[], what: string): ApiError {
    const object = path.length === 0 ? 'everything (*)' : `${what} ${resourceLabel(path)}`;
    return forbidden(
      `Permission ${ACTION_NAMES[action]} on ${object} is missing for user "${this.user.name}".`,
      `An administrator can grant it: CALL SYSADMIN.setPermissions('<role>', '${resourceLabel(path)}', '${action}').`,
    );
  }

  /** The columns of a table the user may read (all for administrators). */
  readableColumns(schema: string, table: TableDef): ColumnDef[] {
    if (this.admin) return table.columns;
    return table.columns.filter((c) => this.allows('R', [schema, table.name, c.name]));
  }

  /** Whether the user may read anything of the table (at least one column). */
  canRead(schema: string, table: TableDef): boolean {
    return this.admin || table.columns.some((c) => this.allows('R', [schema, table.name, c.name]));
  }

  /** Whether the schema shows to the user: they may read one of its tables or hold an entry on it. */
  seesSchema(schema: string, tables: readonly TableDef[]): boolean {
    if (this.admin) return true;
    const key = schema.toLowerCase();
    const onSchema = this.userEntries.some((e) => {
      const path = parseResource(e.resource);
      return path.length > 0 && path[0]!.toLowerCase() === key && e.permissions !== '';
    });
    return onSchema || tables.some((t) => this.canRead(schema, t));
  }

  /**
   * The row conditions for `action` on a table: null when the user may act on every row, else
   * the conditions of which a row must meet one. Only meaningful when the action is allowed.
   */
  rowConditions(action: Action, schema: string, table: TableDef, viaView = false): string[] | null {
    if (this.admin) return null;
    const conditions: string[] = [];
    for (const role of this.entries) {
      // A role grants the action on the table when it grants it on any of its columns.
      const grants = table.columns.some((c) => this.decidingEntry(role, [schema, table.name, c.name])?.permissions.includes(action));
      if (!grants) continue;
      const condition = role.get(keyOf([schema, table.name]))?.condition ?? null;
      if (condition === null) return null;
      conditions.push(condition);
    }
    if (viaView && conditions.length === 0) {
      // Read through a view the user may read: no grant of its own needed, but the conditions
      // of the user's roles on the table still hold there.
      const own = this.entries
        .map((role) => role.get(keyOf([schema, table.name]))?.condition ?? null)
        .filter((c): c is string => c !== null);
      return own.length > 0 ? own : null;
    }
    return conditions;
  }

  /** The masked value of a column as an expression over the table's columns; null when unmasked. */
  columnMask(schema: string, table: TableDef, column: ColumnDef): string | null {
    if (this.admin) return null;
    const key = keyOf([schema, table.name, column.name]);
    const masks = this.entries
      .map((role) => role.get(key))
      .filter((e): e is PermissionDef => e !== undefined && e.mask !== null)
      .sort((a, b) => (b.maskOrder ?? 0) - (a.maskOrder ?? 0));
    if (masks.length === 0) return null;
    if (masks[0]!.condition === null) return `(${masks[0]!.mask})`;
    const branches: string[] = [];
    for (const entry of masks) {
      if (entry.condition === null) return `CASE ${branches.join(' ')} ELSE (${entry.mask}) END`;
      branches.push(`WHEN (${entry.condition}) THEN (${entry.mask})`);
    }
    return `CASE ${branches.join(' ')} ELSE ${quoteName(column.name)} END`;
  }
}

const quoteName = (name: string) => `"${name.replace(/"/g, '""')}"`;
