/**
 * A client's prepared statement executed again and again (pgbench -M prepared, JDBC): each
 * Execute is answered from what the first one learned (the statement's template, PostgreSQL's
 * own prepared statement), and each still goes through every stage of a request: a row
 * condition, a mask, a revoked grant or an altered table between two Executes of the same
 * prepared statement takes effect at the next one; each Execute is in the query log.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import type { WholeStatementConnector } from '../../src/connectors/types.js';
import { postgresClient, startWireServer, type WireServer } from './helpers.js';

let wire: WireServer;
let postgres: pg.Client;
/** Statements read through a prepared statement at PostgreSQL. */
let sourcePrepared = 0;

before(async () => {
  wire = await startWireServer({ roleLimits: { capped: { maxRowsPerStatement: 3 } } });
  postgres = await postgresClient();
  await postgres.query('DROP TABLE IF EXISTS wire_prepared');
  await postgres.query(`CREATE TABLE wire_prepared AS SELECT g::bigint AS id, 'item ' || g AS label, (g * 1.5)::numeric(10,2) AS price,
      date '2024-01-01' + g AS day FROM generate_series(1, 100) g`);
  const added = await wire.server.request('/rest/api/source', {
    body: { name: 'pgp', template: 'postgresql', connectionProps: 'host=127.0.0.1,port=5432,db=test,user-name=postgres' },
  });
  assert.equal(added.status, 201, await added.text());
  const admin = await wire.client();
  await admin.query("CALL SYSADMIN.addRole('preparers')");
  await admin.query("CALL SYSADMIN.setPermissions('preparers', 'pgp.wire_prepared', 'R')");
  await admin.query("CALL SYSADMIN.addUser('pia', 'pia-password-1')");
  await admin.query("CALL SYSADMIN.addUserRole('preparers', 'pia')");
  const { registry } = wire.server.services;
  const connector = registry.connectorOf(registry.findSource('pgp')!) as WholeStatementConnector;
  const original = connector.preparedStatementJson!.bind(connector);
  connector.preparedStatementJson = (...args) => {
    sourcePrepared++;
    return original(...args);
  };
});
after(async () => {
  await postgres?.query('DROP TABLE IF EXISTS wire_prepared');
  await postgres?.end();
  await wire?.close();
});

const admin = async (sql: string) => {
  const client = await wire.client();
  await client.query(sql);
};

/** Executes the client's prepared statement `lookup` (parsed once per connection by `pg`, then Bind and Execute). */
const lookup = (client: pg.Client, text: string, values: unknown[]) =>
  client.query({ name: 'lookup', text, values, rowMode: 'array', types: { getTypeParser: () => (value: string) => value } });

/** The SQLSTATE of what `run` rejects with. */
async function codeOf(run: Promise<unknown>): Promise<string> {
  try {
    await run;
  } catch (err) {
    return (err as { code?: string }).code ?? String(err);
  }
  return 'no error';
}

test("Executes of one prepared statement are answered through PostgreSQL's prepared statement, each logged", async () => {
  const client = await wire.client('pia', 'pia-password-1');
  const text = 'SELECT id, label, price, day FROM pgp.wire_prepared WHERE id = $1';
  assert.deepEqual((await lookup(client, text, ['3'])).rows, [['3', 'item 3', '4.50', '2024-01-04']]);
  const [templatedBefore, preparedBefore] = [wire.server.services.engine.templated, sourcePrepared];
  const logged = wire.server.services.queryLog.list().length;
  for (const id of [7, 42, 100]) {
    const price = (id * 1.5).toFixed(2);
    assert.deepEqual((await lookup(client, text, [String(id)])).rows, [[String(id), `item ${id}`, price, lookupDay(id)]]);
  }
  assert.deepEqual((await lookup(client, text, ['1000'])).rows, []);
  assert.equal(wire.server.services.engine.templated - templatedBefore, 4, 'from the template');
  assert.equal(sourcePrepared - preparedBefore, 4, "through PostgreSQL's prepared statement");
  const entries = wire.server.services.queryLog.list().slice(logged);
  assert.deepEqual(
    entries.map((e) => [e.user, e.statement, e.status, e.rows]),
    [7, 42, 100, 1000].map((id) => ['pia', text, 'ok', id === 1000 ? 0 : 1]),
  );
});

const lookupDay = (id: number) => new Date(Date.UTC(2024, 0, 1 + id)).toISOString().slice(0, 10);

test('a row condition and a mask set between two Executes of the same prepared statement apply at the next', async () => {
  const client = await wire.client('pia', 'pia-password-1');
  const text = 'SELECT id, label FROM pgp.wire_prepared WHERE id <= $1 ORDER BY id';
  assert.equal((await lookup(client, text, ['10'])).rows.length, 10);
  assert.equal((await lookup(client, text, ['10'])).rows.length, 10, 'the same again, from what the first learned');

  await admin("CALL SYSADMIN.setPermissions('preparers', 'pgp.wire_prepared', 'R', 'id > 5')");
  assert.deepEqual(
    (await lookup(client, text, ['8'])).rows,
    [6, 7, 8].map((id) => [String(id), `item ${id}`]),
  );

  await admin("CALL SYSADMIN.setPermissions('preparers', 'pgp.wire_prepared.label', 'R', NULL, '''hidden''')");
  assert.deepEqual((await lookup(client, text, ['7'])).rows, [
    ['6', 'hidden'],
    ['7', 'hidden'],
  ]);
  await admin("CALL SYSADMIN.setPermissions('preparers', 'pgp.wire_prepared.label', NULL)");
  await admin("CALL SYSADMIN.setPermissions('preparers', 'pgp.wire_prepared', 'R')");
  assert.equal((await lookup(client, text, ['10'])).rows.length, 10, 'the condition removed');
});

test('a grant revoked between two Executes of the same prepared statement refuses the next', async () => {
  const client = await wire.client('pia', 'pia-password-1');
  const text = 'SELECT label FROM pgp.wire_prepared WHERE id = $1';
  assert.deepEqual((await lookup(client, text, ['5'])).rows, [['item 5']]);
  assert.deepEqual((await lookup(client, text, ['6'])).rows, [['item 6']]);
  await admin("CALL SYSADMIN.setPermissions('preparers', 'pgp.wire_prepared', NULL)");
  assert.equal(await codeOf(lookup(client, text, ['6'])), '42501');
  await admin("CALL SYSADMIN.setPermissions('preparers', 'pgp.wire_prepared', 'R')");
  assert.deepEqual((await lookup(client, text, ['6'])).rows, [['item 6']], 'granted again');
});

test('a table altered between two Executes of the same prepared statement: the next reads the new columns', async () => {
  const client = await wire.client('pia', 'pia-password-1');
  const text = 'SELECT * FROM pgp.wire_prepared WHERE id = $1';
  assert.deepEqual((await lookup(client, text, ['2'])).rows, [['2', 'item 2', '3.00', '2024-01-03']]);
  assert.deepEqual((await lookup(client, text, ['3'])).rows, [['3', 'item 3', '4.50', '2024-01-04']]);
  await postgres.query('ALTER TABLE wire_prepared ADD COLUMN stock int DEFAULT 9');
  await admin("CALL SYSADMIN.refreshDataSource('pgp')");
  const after = await lookup(client, text, ['3']);
  assert.deepEqual(
    after.fields.map((f) => f.name),
    ['id', 'label', 'price', 'day', 'stock'],
  );
  assert.deepEqual(after.rows, [['3', 'item 3', '4.50', '2024-01-04', '9']]);
  await postgres.query('ALTER TABLE wire_prepared DROP COLUMN stock');
  await admin("CALL SYSADMIN.refreshDataSource('pgp')");
});

test("a role's row limit applies to each Execute of a prepared statement", async () => {
  await admin("CALL SYSADMIN.addRole('capped')");
  await admin("CALL SYSADMIN.addUser('cap', 'cap-password-1')");
  await admin("CALL SYSADMIN.setPermissions('capped', 'pgp.wire_prepared', 'R')");
  await admin("CALL SYSADMIN.addUserRole('capped', 'cap')");
  const client = await wire.client('cap', 'cap-password-1');
  const text = 'SELECT id FROM pgp.wire_prepared WHERE id <= $1 ORDER BY id';
  assert.equal((await lookup(client, text, ['3'])).rows.length, 3);
  assert.equal((await lookup(client, text, ['2'])).rows.length, 2);
  assert.equal(await codeOf(lookup(client, text, ['4'])), '53400');
  assert.equal((await lookup(client, text, ['1'])).rows.length, 1, 'the session goes on');
});
