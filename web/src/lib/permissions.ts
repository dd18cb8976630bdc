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

/** True when some role holds `letter` on `resource` (a schema, or SYSADMIN.<procedure>). */
export function may(grants: Grants, letter: string, resource: string): boolean {
  if (grants.admin) return true;
  const name = resource.toLowerCase();
  const roles = new Set(grants.entries.map((e) => e.role));
  for (const role of roles) {
    const own = grants.entries.filter((e) => e.role === role);
    const exact = own.find((e) => {
      const r = e.resource.toLowerCase();
      return r === name || r === `${name}.*`;
    });
    const decides = exact ?? own.find((e) => e.resource === '*');
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
