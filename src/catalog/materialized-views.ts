/**
 * Materialized views as the virtual database shows them (docs/copies.md, "Materialized views").
 * A materialized view is stored once, as a local copy of kind 'view' (its SELECT, its columns,
 * its schedule); everywhere names are resolved, listed or checked it stands as a view of its
 * virtual schema, derived here from that copy and never stored twice.
 */
import type { CatalogData, CopyDef, TableDef, ViewDef } from './types.js';

/** The copy each derived view stands for. */
const copyOfView = new WeakMap<TableDef, CopyDef>();
/** Per catalog state (replaced whole on every change), its views with the materialized ones. */
const viewsOf = new WeakMap<CatalogData, readonly ViewDef[]>();

/** The view a materialized view's copy stands as: kind View, its columns, its rows when refreshed. */
function viewOf(copy: CopyDef): ViewDef {
  const view: ViewDef = {
    schema: copy.schema,
    name: copy.table,
    nameInSource: copy.table,
    kind: 'View',
    sql: copy.sql ?? '',
    columns: copy.columns ?? [],
    primaryKey: [],
    cardinality: copy.current?.rows ?? null,
    description: null,
    owner: copy.owner,
    createdAt: copy.createdAt,
    uid: copy.name,
    oid: copy.oid,
  };
  copyOfView.set(view, copy);
  return view;
}

/** Every view of the catalog: the stored ones (CREATE VIEW), then the materialized ones. */
export function catalogViews(catalog: CatalogData): readonly ViewDef[] {
  let views = viewsOf.get(catalog);
  if (!views) {
    const materialized = (catalog.copies ?? []).filter((c) => c.kind === 'view').map(viewOf);
    views = materialized.length === 0 ? (catalog.views ?? []) : [...(catalog.views ?? []), ...materialized];
    viewsOf.set(catalog, views);
  }
  return views;
}

/** The copy of a materialized view, for the view `catalogViews` made of it; undefined for any other table or view. */
export const materializedCopyOf = (table: TableDef): CopyDef | undefined => copyOfView.get(table);
