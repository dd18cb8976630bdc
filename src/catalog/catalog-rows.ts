/**
 * The catalog as rows of the catalog database: one row per source, view, user, role, grant,
 * API key, invitation and stored connection (kind, key, position, JSON), plus the scalars of
 * the state row. A change writes only the rows it changed, so two instances changing different
 * things never rewrite each other's data.
 */
import type { CatalogData } from './types.js';

/** The list fields of CatalogData stored as rows, with each item's natural key. */
const KINDS = {
  sources: (item: { name: string }) => item.name,
  connections: (item: { name: string }) => item.name,
  apiKeys: (item: { id: string }) => item.id,
  roles: (item: string) => item,
  permissions: (item: { role: string; resource: string }) => `${item.role}\n${item.resource}`,
  views: (item: { schema: string; name: string }) => `${item.schema}.${item.name}`,
  invites: (item: { name: string }) => item.name,
  copies: (item: { name: string }) => item.name,
  users: (item: { name: string }) => item.name,
} as const;

export type RowKind = keyof typeof KINDS;
export const ROW_KINDS = Object.keys(KINDS) as RowKind[];

export interface CatalogRow {
  kind: RowKind;
  key: string;
  position: number;
  /** The item as JSON text. */
  data: string;
}

/** The scalars kept in the state row. */
export interface CatalogScalars {
  nextOid: number;
  initialized: boolean;
}

/** Every row of `catalog`, keyed by `kind` and key. Repeated keys (never expected) get a suffix, so nothing is lost. */
export function rowsOf(catalog: CatalogData): Map<string, CatalogRow> {
  const rows = new Map<string, CatalogRow>();
  for (const kind of ROW_KINDS) {
    const items = (catalog[kind] ?? []) as unknown[];
    const keyOf = KINDS[kind] as (item: unknown) => string;
    items.forEach((item, position) => {
      let key = keyOf(item);
      for (let n = 2; rows.has(`${kind}\0${key}`); n++) key = `${keyOf(item)}#${n}`;
      rows.set(`${kind}\0${key}`, { kind, key, position, data: JSON.stringify(item) });
    });
  }
  return rows;
}

/** The catalog made of stored rows (any order; `data` as JSON text) and the state row's scalars. */
export function catalogOf(rows: Iterable<{ kind: string; position: number; data: string }>, scalars: CatalogScalars): CatalogData {
  const lists = new Map<RowKind, Array<{ position: number; data: unknown }>>();
  for (const row of rows) {
    if (!(ROW_KINDS as string[]).includes(row.kind)) throw new Error(`the catalog database holds rows of an unknown kind "${row.kind}"`);
    const list = lists.get(row.kind as RowKind) ?? [];
    list.push({ position: row.position, data: JSON.parse(row.data) as unknown });
    lists.set(row.kind as RowKind, list);
  }
  const catalog: CatalogData = { formatVersion: 1, sources: [], users: [], nextOid: scalars.nextOid };
  if (scalars.initialized) catalog.initialized = true;
  for (const [kind, list] of lists) {
    (catalog as unknown as Record<string, unknown>)[kind] = list.sort((a, b) => a.position - b.position).map((item) => item.data);
  }
  return catalog;
}

/** What turns `before` into `after`: rows to write (new or changed) and rows to delete. */
export function diffRows(
  before: CatalogData,
  after: CatalogData,
): { upserts: CatalogRow[]; deletes: Array<Pick<CatalogRow, 'kind' | 'key'>> } {
  const old = rowsOf(before);
  const next = rowsOf(after);
  const upserts: CatalogRow[] = [];
  const deletes: Array<Pick<CatalogRow, 'kind' | 'key'>> = [];
  for (const [id, row] of next) {
    const was = old.get(id);
    if (!was || was.data !== row.data || was.position !== row.position) upserts.push(row);
  }
  for (const [id, row] of old) if (!next.has(id)) deletes.push({ kind: row.kind, key: row.key });
  return { upserts, deletes };
}
