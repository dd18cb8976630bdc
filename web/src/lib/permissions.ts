/**
 * What the signed-in user may change, so that the console offers only what the API would allow
 * (docs/security.md#permissions). Administrators may do everything. Others get letters of CRUDEA
 * from their roles' entries in SYSADMIN.Permissions, which shows each user their own roles' rows:
 * per role the most specific entry decides (a schema's over `*`), and the roles add up.
 */

export interface Entry {
  role: string;
  resource: string;
  letters: string;
}

export interface Grants {
  admin: boolean;
  entries: Entry[];
}

export const NO_GRANTS: Grants = { admin: false, entries: [] };

/**
 * True when some role holds `letter` on `resource` (a schema, or SYSADMIN.<procedure>): as vdb
 * decides, the role's most specific entry on the resource or a part of it (the procedure, its
 * schema, `*`).
 */
export function may(grants: Grants, letter: string, resource: string): boolean {
  if (grants.admin) return true;
  const parts = resource.toLowerCase().split('.');
  const paths = parts.map((_, i) => parts.slice(0, parts.length - i).join('.'));
  const roles = new Set(grants.entries.map((e) => e.role));
  for (const role of roles) {
    const own = grants.entries.filter((e) => e.role === role);
    const on = (path: string) =>
      own.find((e) => {
        const r = e.resource.toLowerCase();
        return r === path || r === `${path}.*`;
      });
    const decides = paths.map(on).find((e) => e !== undefined) ?? own.find((e) => e.resource === '*');
    if (decides?.letters.toUpperCase().includes(letter)) return true;
  }
  return false;
}

/** Adding a source needs A on `*` or on the new schema's name: offered when some entry of a schema or `*` holds A. */
export function mayAddSource(grants: Grants): boolean {
  return (
    grants.admin || grants.entries.some((e) => !e.resource.replace(/\.\*$/, '').includes('.') && e.letters.toUpperCase().includes('A'))
  );
}

export const mayAlterSource = (grants: Grants, schema: string): boolean => may(grants, 'A', schema);

export const mayRefreshSource = (grants: Grants, schema: string): boolean =>
  may(grants, 'A', schema) && may(grants, 'E', 'SYSADMIN.refreshDataSource');

/** Refreshing, pausing, resuming and dropping a copy: `A` on its schema and `E` on the procedure (docs/copies.md). */
export const mayManageCopy = (
  grants: Grants,
  schema: string,
  procedure: 'refreshCopy' | 'pauseCopy' | 'resumeCopy' | 'dropCopy',
): boolean => may(grants, 'A', schema) && may(grants, 'E', `SYSADMIN.${procedure}`);

/** Accelerating a table: `E` on SYSADMIN.accelerateTable and `A` on some schema (vdb checks the table's). */
export const mayAccelerate = (grants: Grants): boolean => mayAddSource(grants) && may(grants, 'E', 'SYSADMIN.accelerateTable');
