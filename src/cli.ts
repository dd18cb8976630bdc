#!/usr/bin/env node
/**
 * The vdb command line: `vdb serve` starts the server; `vdb query "<sql>"` sends a statement to a
 * running server and prints the rows; `vdb migrate-catalog` copies a data directory's catalog
 * into a catalog database.
 */
import { parseArgs } from 'node:util';
import { migrateCatalog } from './catalog/migrate.js';
import { loadConfig } from './config.js';
import { startServer } from './server/start.js';

const HELP = `vdb - one virtual database over SQLite, files, PostgreSQL and MariaDB, queried by SQL over REST

Usage:
  vdb serve [--port N] [--host H] [--data-dir DIR]
      Start the server (defaults: port 8080 or $PORT, host 127.0.0.1, data dir ./data or $VDB_DATA_DIR).

  vdb query "<sql>" [--url URL] [--user NAME] [--password PW] [--objects] [--headers]
      Send one statement to a running server and print the rows as JSON.
      --url       server address (default $VDB_URL or http://127.0.0.1:8080)
      --user      user name (default $VDB_USER or admin)
      --password  password (default $VDB_PASSWORD)
      --objects   rows as objects keyed by column name instead of arrays
      --headers   first row lists the column names

  vdb migrate-catalog [--data-dir DIR] [--catalog-url URL] [--catalog-schema NAME]
      Copy a data directory's catalog and secrets into a PostgreSQL catalog database, for
      instances started with catalog.url (defaults: $VDB_CATALOG_URL, schema vdb). Run it with
      vdb stopped; it refuses a schema that already holds a catalog.

  vdb --help      Show this help.

Configuration: see docs/configuration.md.`;

/** The object without its undefined values (options not given leave the configuration's). */
const defined = <T extends object>(o: T): Partial<T> =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      help: { type: 'boolean', short: 'h' },
      port: { type: 'string' },
      host: { type: 'string' },
      'data-dir': { type: 'string' },
      url: { type: 'string' },
      user: { type: 'string' },
      password: { type: 'string' },
      objects: { type: 'boolean' },
      headers: { type: 'boolean' },
      'catalog-url': { type: 'string' },
      'catalog-schema': { type: 'string' },
    },
  });
  const [command, ...rest] = positionals;
  if (values.help || !command || command === 'help') {
    process.stdout.write(`${HELP}\n`);
    return command || values.help ? 0 : 1;
  }
  if (command === 'serve') {
    const port = values.port !== undefined ? Number(values.port) : undefined;
    if (port !== undefined && !Number.isInteger(port)) throw new Error('--port must be a number');
    const { url, pgwire } = await startServer({ port, host: values.host, dataDir: values['data-dir'] });
    process.stdout.write(`vdb listening on ${url}${pgwire ? ` and for PostgreSQL clients on ${pgwire}` : ''}\n`);
    return -1; // keep running
  }
  if (command === 'migrate-catalog') {
    const config = loadConfig(process.env, {
      dataDir: values['data-dir'],
      catalog: defined({ url: values['catalog-url'], schema: values['catalog-schema'] }),
    });
    if (config.catalog.url === null)
      throw new Error('vdb migrate-catalog needs the catalog database: give --catalog-url or set VDB_CATALOG_URL');
    const report = await migrateCatalog(config.dataDir, config.catalog.url, config.catalog.schema);
    process.stdout.write(
      `copied the catalog of ${config.dataDir} into schema "${config.catalog.schema}": ${report.users} users, ${report.sources} sources, ` +
        `${report.views} views, ${report.permissions} permission entries, and the server secrets\n`,
    );
    if (report.localFiles.length > 0) {
      process.stderr.write(
        `warning: sources ${report.localFiles.join(', ')} read files inside ${config.dataDir}; every instance must find them at the same path (a shared folder)\n`,
      );
    }
    return 0;
  }
  if (command === 'query') {
    const sql = rest.join(' ');
    if (!sql) throw new Error('vdb query needs a SQL statement, e.g. vdb query "SELECT 1"');
    const base = values.url ?? process.env.VDB_URL ?? 'http://127.0.0.1:8080';
    const user = values.user ?? process.env.VDB_USER ?? 'admin';
    const password = values.password ?? process.env.VDB_PASSWORD ?? '';
    const url = new URL('/rest/api/query', base);
    if (values.objects) url.searchParams.set('array', 'false');
    if (values.headers) url.searchParams.set('headers', 'true');
    if (!password) {
      throw new Error(`vdb query needs the password of "${user}": give --password, or set VDB_PASSWORD (and VDB_USER for another user)`);
    }
    let response: Response;
    try {
      response = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
        },
        body: JSON.stringify({ sql }),
      });
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw new Error(
        `no vdb server answered at ${base} (${cause?.code ?? cause?.message ?? (err as Error).message}): start one with "vdb serve", or give its address with --url or VDB_URL`,
      );
    }
    const text = await response.text();
    if (response.status === 401) {
      throw new Error(
        `the server at ${base} refused the user "${user}" and this password (401): check --user/VDB_USER and --password/VDB_PASSWORD`,
      );
    }
    process.stdout.write(`${text}\n`);
    const warnings = response.headers.get('sql-warnings');
    if (warnings) process.stderr.write(`warnings: ${warnings}\n`);
    return response.ok ? 0 : 1;
  }
  process.stderr.write(`unknown command "${command}"\n\n${HELP}\n`);
  return 1;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`vdb: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
