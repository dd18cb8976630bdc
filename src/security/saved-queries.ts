/**
 * Saved queries: statements a user keeps under a name, in their own user entry of the catalog,
 * so they follow the user across browsers, sessions and instances. Only the user reads and
 * changes them (GET/PUT/DELETE /rest/api/preferences/queries).
 */
import type { CatalogStore } from '../catalog/store.js';
import type { SavedQuery } from '../catalog/types.js';
import { badRequest, notFound } from '../errors.js';

/** Bounds that keep the catalog small: saved queries ride in every copy of it. */
export const SAVED_QUERY_LIMITS = { nameLength: 200, sqlLength: 100_000, perUser: 500 } as const;

export function savedQueries(store: CatalogStore, user: string): SavedQuery[] {
  const found = store.current.users.find((u) => u.name === user)?.savedQueries ?? [];
  return [...found].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** Saves `sql` under `name`, replacing a query of that name. */
export async function saveQuery(store: CatalogStore, user: string, name: string, sql: string, now = new Date()): Promise<SavedQuery> {
  const trimmed = name.trim();
  if (!trimmed || trimmed.length > SAVED_QUERY_LIMITS.nameLength)
    throw badRequest(
      `A saved query's name has 1 to ${SAVED_QUERY_LIMITS.nameLength} characters (not only spaces).`,
      null,
      'Invalid saved query',
    );
  if (!sql.trim() || sql.length > SAVED_QUERY_LIMITS.sqlLength)
    throw badRequest(`A saved query's SQL has 1 to ${SAVED_QUERY_LIMITS.sqlLength} characters.`, null, 'Invalid saved query');
  return store.update((catalog) => {
    const entry = catalog.users.find((u) => u.name === user);
    if (!entry) throw notFound(`User "${user}" does not exist.`);
    const list = entry.savedQueries ?? [];
    const saved = { name: trimmed, sql, savedAt: now.toISOString() };
    const at = list.findIndex((q) => q.name === trimmed);
    if (at >= 0) list[at] = saved;
    else if (list.length >= SAVED_QUERY_LIMITS.perUser)
      throw badRequest(
        `You have ${SAVED_QUERY_LIMITS.perUser} saved queries, the most a user may keep.`,
        'Delete some first.',
        'Too many saved queries',
      );
    else list.push(saved);
    entry.savedQueries = list;
    return { ...saved };
  });
}

export async function removeQuery(store: CatalogStore, user: string, name: string): Promise<void> {
  await store.update((catalog) => {
    const entry = catalog.users.find((u) => u.name === user);
    const list = entry?.savedQueries ?? [];
    const at = list.findIndex((q) => q.name === name);
    if (!entry || at < 0) throw notFound(`You have no saved query named "${name}".`, null, 'Saved query not found');
    list.splice(at, 1);
    entry.savedQueries = list;
  });
}
