/**
 * The PostgreSQL JDBC driver (Debian's libpostgresql-jdbc-java) with the machine's Java: a small
 * program compiled by the test signs in (SCRAM), reads the database's version, runs a prepared
 * statement past the driver's prepareThreshold (server-side named statements), reads with a fetch
 * size inside a transaction (portals with a row limit), and reads numeric, boolean, float and
 * timestamp values. Skipped where Java or the driver is missing.
 */
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { ADMIN_PASSWORD } from '../helpers/server.js';
import { startWireServer, type WireServer } from './helpers.js';

const DRIVER = '/usr/share/java/postgresql.jar';
/** The Java source, in the repository's test/pgwire/jdbc (this file runs from dist/test/pgwire). */
const SOURCE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../test/pgwire/jdbc/WireProbe.java');
const METADATA = path.join(path.dirname(SOURCE), 'MetadataProbe.java');
const hasJava = (() => {
  try {
    execFileSync('javac', ['-version'], { stdio: 'ignore' });
    return fs.existsSync(DRIVER) && fs.existsSync(SOURCE);
  } catch {
    return false;
  }
})();

let wire: WireServer;
const classes = fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-jdbc-'));
before(async () => {
  if (!hasJava) return;
  execFileSync('javac', ['-d', classes, SOURCE, METADATA]);
  wire = await startWireServer();
  const { users } = wire.server.services;
  await users.addPasswordUser('jdbc_reader', 'reader-password-1');
  await users.addRole('jdbc_customers');
  await users.addUserRole('jdbc_customers', 'jdbc_reader');
  await users.setPermissions(
    { role: 'jdbc_customers', resource: 'shop.customers', permissions: 'R', condition: null, mask: null, maskOrder: null },
    (a, b) => a === b,
  );
});
after(async () => {
  await wire?.close();
  fs.rmSync(classes, { recursive: true, force: true });
});

test(
  'JDBC: sign-in, prepared statements, fetch size, types',
  { skip: !hasJava && 'javac or the PostgreSQL JDBC driver is missing' },
  async () => {
    const output = await java('WireProbe', 'admin', ADMIN_PASSWORD);
    const lines = output.trim().split('\n');
    assert.equal(lines[0], 'product 15.0');
    assert.deepEqual(
      lines.filter((line) => line.startsWith('row ')),
      Array.from({ length: 6 }, () => 'row 2 Chiara Ferrari 2024-04-03'),
    );
    assert.ok(lines.includes('sum 55'), output);
    assert.ok(lines.includes('types 1.5 true 2.5 2024-01-02 03:04:05.0'), output);
  },
);

/** The output of one of the compiled programs run against the listener as `user`. */
function java(program: string, user: string, password: string): Promise<string> {
  return new Promise<string>((resolve, reject) =>
    execFile(
      'java',
      ['-cp', `${classes}${path.delimiter}${DRIVER}`, program, String(wire.listener.port), user, password],
      { timeout: 60_000 },
      (err, stdout, stderr) => (err ? reject(new Error(`${stderr}\n${stdout}`)) : resolve(stdout)),
    ),
  );
}

test(
  'JDBC DatabaseMetaData: schemas, tables, columns and primary keys, as each user may see them',
  { skip: !hasJava && 'javac or the PostgreSQL JDBC driver is missing' },
  async () => {
    const admin = (await java('MetadataProbe', 'admin', ADMIN_PASSWORD)).trim().split('\n');
    for (const schema of ['schema shop', 'schema files', 'schema pg_catalog', 'schema information_schema'])
      assert.ok(admin.includes(schema), admin.join('\n'));
    assert.ok(admin.includes('table shop.orders TABLE null'), admin.join('\n'));
    assert.ok(admin.includes('table shop.paid_orders VIEW null'), admin.join('\n'));
    assert.ok(admin.includes('table files.regions TABLE CSV file regions.csv'), admin.join('\n'));
    assert.deepEqual(admin.filter((line) => line.startsWith('column ')).slice(0, 2), [
      'column customers.id -5 int8 1 NO',
      'column customers.name 12 text 2 NO',
    ]);
    assert.deepEqual(
      admin.filter((line) => line.startsWith('key ')),
      ['key customers.id 1 customers_pkey'],
    );
    const reader = (await java('MetadataProbe', 'jdbc_reader', 'reader-password-1')).trim().split('\n');
    assert.deepEqual(
      reader.filter((line) => line.startsWith('table ') && !line.startsWith('table SYS')),
      ['table shop.customers TABLE null'],
    );
    assert.ok(!reader.includes('schema files'), reader.join('\n'));
    assert.ok(reader.includes('key customers.id 1 customers_pkey'), reader.join('\n'));
  },
);
