/**
 * The two vdb sources over a loaded TPC-H data set, as POST /rest/api/source bodies: `pg`, the
 * PostgreSQL schema of lineitem, orders, partsupp and part; `my`, the MariaDB database of
 * customer, supplier, nation and region.
 */
import type { Connections, Layout } from './load.js';

/** key=value pairs of connectionProps, with the separators escaped. */
const props = (entries: Record<string, string | number | undefined>) =>
  Object.entries(entries)
    .filter(([, v]) => v !== undefined && v !== '')
    .map(([k, v]) => `${k}=${String(v).replace(/[\\,=]/g, (c) => `\\${c}`)}`)
    .join(',');

export function sourceBodies(where: Layout, conn: Connections, names = { pg: 'pg', my: 'my' }) {
  return [
    {
      name: names.pg,
      template: 'postgresql',
      connectionProps: props({
        host: conn.pg.host,
        port: conn.pg.port,
        db: conn.pg.database,
        'user-name': conn.pg.user,
        password: typeof conn.pg.password === 'string' ? conn.pg.password : undefined,
      }),
      modelProps: `importer.schemaPattern=${where.prefix}`,
    },
    {
      name: names.my,
      template: 'mysql',
      connectionProps: props({
        host: conn.my.host,
        port: conn.my.port,
        db: where.prefix,
        'user-name': conn.my.user,
        password: conn.my.password,
      }),
      modelProps: '',
    },
  ];
}
