/**
 * The PostgreSQL listener with real clients: sign-in, permissions, types and texts compared with
 * PostgreSQL's own answers, the extended protocol (parameters, portals with a row limit),
 * failures midway, clients that vanish mid-result, cancel, session settings and blocks.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import type pg from 'pg';
import { parseVerifier, scramVerifier } from '../../src/security/scram.js';
import { body, postgresClient, RawClient, rawTypes, startWireServer, type WireServer } from './helpers.js';

let wire: WireServer;
let database: string;
before(async () => {
  wire = await startWireServer();
  database = wire.server.services.config.vdbName;
  const { users } = wire.server.services;
  await users.addPasswordUser('bob', 'bob-password-1');
  await users.addRole('shop_reader');
  await users.addUserRole('shop_reader', 'bob');
  await users.setPermissions(
    { role: 'shop_reader', resource: 'shop.customers', permissions: 'R', condition: null, mask: null, maskOrder: null },
    (a, b) => a === b,
  );
  await users.addPasswordUser('carol', 'carol-password-1');
});
after(async () => wire.close());

/** The SQLSTATE of what `run` rejects with. */
async function codeOf(run: Promise<unknown>): Promise<string> {
  try {
    await run;
  } catch (err) {
    return (err as { code?: string }).code ?? String(err);
  }
  return 'no error';
}

describe('sign-in', () => {
  test('the right password signs in; a wrong one is 28P01, as is an unknown user', async () => {
    const client = await wire.client();
    assert.deepEqual((await client.query('SELECT 1 AS one')).rows, [{ one: 1 }]);
    assert.equal(await codeOf(wire.client('admin', 'wrong-password')), '28P01');
    assert.equal(await codeOf(wire.client('nobody', 'whatever-1')), '28P01');
  });

  test('an unknown database is 3D000', async () => {
    const { default: pgModule } = await import('pg');
    const client = new pgModule.Client({ host: '127.0.0.1', port: wire.listener.port, user: 'admin', password: 'x', database: 'other' });
    client.on('error', () => undefined);
    assert.equal(await codeOf(client.connect()), '3D000');
  });

  test('psql signs in with the right password and fails with a wrong one', async () => {
    const ok = await wire.psql('SELECT 40 + 2');
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(ok.stdout, '42\n');
    const wrong = await wire.psql('SELECT 1', ['-At'], 'admin', 'wrong');
    assert.notEqual(wrong.code, 0);
    assert.match(wrong.stderr, /password authentication failed for user "admin"/);
  });

  test('an API key is a password, with its public part vdb_<id> as the user name', async () => {
    const response = await wire.server.request('/rest/api/keys', { body: { name: 'wire' } });
    const { key } = (await response.json()) as { key: string };
    assert.ok(key, 'an API key was created');
    const keyUser = key.split('_').slice(0, 2).join('_');
    const client = await wire.client(keyUser, key);
    assert.deepEqual((await client.query('SELECT current_user AS who')).rows.length, 1);
    assert.equal(await codeOf(wire.client(keyUser, `${key.slice(0, -1)}x`)), '28P01');
  });

  test("SCRAM-SHA-256 verifiers are PostgreSQL's: the same text for the same salt and iterations", async () => {
    const postgres = await postgresClient();
    try {
      await postgres.query("SET password_encryption = 'scram-sha-256'");
      await postgres.query('DROP ROLE IF EXISTS vdb_scram_probe');
      await postgres.query("CREATE ROLE vdb_scram_probe PASSWORD 'Pässword-1'");
      const { rows } = await postgres.query<{ rolpassword: string }>("SELECT rolpassword FROM pg_authid WHERE rolname = 'vdb_scram_probe'");
      const stored = rows[0]!.rolpassword;
      const parsed = parseVerifier(stored)!;
      assert.equal(await scramVerifier('Pässword-1', parsed.salt, parsed.iterations), stored);
    } finally {
      await postgres.query('DROP ROLE IF EXISTS vdb_scram_probe').catch(() => undefined);
      await postgres.end();
    }
  });

  test('a user from before SCRAM verifiers signs in with a cleartext password once, and gets a verifier', async () => {
    await wire.server.services.users.addPasswordUser('dave', 'dave-password-1');
    await wire.server.services.store.update((catalog) => {
      delete catalog.users.find((u) => u.name === 'dave')!.scramVerifier;
    });
    const client = await wire.client('dave', 'dave-password-1');
    assert.equal((await client.query('SELECT 1 AS x')).rowCount, 1);
    assert.match(wire.server.services.users.find('dave')!.scramVerifier ?? '', /^SCRAM-SHA-256\$4096:/);
    // Now by SCRAM.
    const again = await wire.client('dave', 'dave-password-1');
    assert.equal((await again.query('SELECT 1 AS x')).rowCount, 1);
    assert.equal(await codeOf(wire.client('dave', 'wrong-password')), '28P01');
  });

  test('failed sign-ins lock the user out as REST does', async () => {
    const locked = await startWireServer({ throttle: { maxFailures: 2, windowMs: 60_000, lockMs: 60_000 } });
    try {
      assert.equal(await codeOf(locked.client('admin', 'wrong-1')), '28P01');
      assert.equal(await codeOf(locked.client('admin', 'wrong-2')), '28P01');
      assert.equal(await codeOf(locked.client()), '28000');
    } finally {
      await locked.close();
    }
  });

  test('a user without permission gets 42501; with a grant the rows', async () => {
    const carol = await wire.client('carol', 'carol-password-1');
    assert.equal(await codeOf(carol.query('SELECT * FROM shop.customers')), '42501');
    const bob = await wire.client('bob', 'bob-password-1');
    assert.equal((await bob.query('SELECT id FROM shop.customers ORDER BY id LIMIT 2')).rowCount, 2);
    assert.equal(await codeOf(bob.query('SELECT * FROM shop.orders')), '42501');
  });
});

/** Expressions whose type OID and text vdb must answer as PostgreSQL does. */
const EXPRESSIONS = [
  '1::int2',
  '2::int4',
  '3000000000::int8',
  '-7',
  '1.50::numeric',
  '123.456::numeric(10,3)',
  '1.5::float8',
  '0.1::float8',
  '1e300::float8',
  "'NaN'::float8",
  "'-Infinity'::float8",
  "'abc'::text",
  '\'with "quotes", commas\'::text',
  'true',
  'false',
  "DATE '2024-01-02'",
  "TIMESTAMP '2024-01-02 03:04:05.5'",
  "TIMESTAMPTZ '2024-01-02 03:04:05+00'",
  "INTERVAL '1 day 02:00:00'",
  "INTERVAL '14 months'",
  "TIME '10:11:12'",
  "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid",
  'ARRAY[1, 2, 3]',
  'ARRAY[1.5, NULL]::float8[]',
  "ARRAY['a b', 'c', '']",
  'NULL::int4',
  '\'{"a": 1}\'::json',
  '\'"x"\'::json',
  '\'[1, "a\\\\b", 1.50]\'::json',
  "'{\"a\": 1}'::json -> 'a'",
  "length('abc')",
  'count(*)',
];

describe('types and texts as PostgreSQL writes them', () => {
  let postgres: pg.Client;
  let client: pg.Client;
  before(async () => {
    postgres = await postgresClient();
    await postgres.query("SET TimeZone = 'UTC'");
    client = await wire.client();
  });
  after(async () => postgres.end());

  for (const expression of EXPRESSIONS) {
    test(expression, async () => {
      const sql = `SELECT ${expression} AS v`;
      const expected = await postgres.query({ text: sql, rowMode: 'array', types: rawTypes });
      const actual = await client.query({ text: sql, rowMode: 'array', types: rawTypes });
      assert.equal(actual.fields[0]!.dataTypeID, expected.fields[0]!.dataTypeID, `type OID of ${expression}`);
      assert.deepEqual(actual.rows, expected.rows, `text of ${expression}`);
      assert.equal(actual.command, 'SELECT');
    });
  }

  test('a table of the demo data through psql, as aligned text', async () => {
    const result = await wire.psql('SELECT id, name, country FROM shop.customers ORDER BY id LIMIT 2', ['-A', '-F', ',']);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^id,name,country\n1,Lukas Müller,DE\n2,Chiara Ferrari,IT\n\(2 rows\)\n$/);
  });
});

describe('statements', () => {
  test('a prepared statement with parameters, run twice', async () => {
    const client = await wire.client();
    const query = { name: 'by-id', text: 'SELECT id, name FROM shop.customers WHERE id = $1', rowMode: 'array' as const };
    assert.deepEqual((await client.query({ ...query, values: [2] })).rows, [['2', 'Chiara Ferrari']]);
    assert.deepEqual((await client.query({ ...query, values: ['3'] })).rows, [['3', 'Chiara Esposito']]);
  });

  test('errors carry SQLSTATE codes and the syntax error its position', async () => {
    const client = await wire.client();
    const syntax = await client.query('SELECT FROM WHERE').catch((err: { code: string; position: string }) => err);
    assert.equal((syntax as { code: string }).code, '42601');
    assert.equal((syntax as { position: string }).position, '13');
    assert.equal(await codeOf(client.query('SELECT * FROM shop.no_such_table')), '42P01');
    assert.equal(await codeOf(client.query('SELECT no_such_column FROM shop.customers')), '42703');
    // The session goes on after an error.
    assert.deepEqual((await client.query('SELECT 3 AS three')).rows, [{ three: 3 }]);
  });

  test('several statements in one text; a failing one ends it, the earlier results stand', async () => {
    const result = await wire.psql('SELECT 1; SELECT * FROM shop.no_such_table; SELECT 3');
    assert.equal(result.stdout, '1\n');
    assert.match(result.stderr, /no_such_table/);
    assert.notEqual(result.code, 0);
  });

  test('an empty query and a comment answer EmptyQueryResponse', async () => {
    const client = await wire.client();
    const result = await client.query('-- nothing');
    assert.equal(result.command, null);
  });

  test('SET, SHOW and RESET; a setting vdb cannot honour is refused', async () => {
    const client = await wire.client();
    assert.deepEqual((await client.query('SHOW DateStyle')).rows, [{ datestyle: 'ISO, MDY' }]);
    await client.query("SET application_name = 'tests'");
    assert.deepEqual((await client.query('SHOW application_name')).rows, [{ application_name: 'tests' }]);
    await client.query('RESET application_name');
    assert.deepEqual((await client.query('SHOW application_name')).rows, [{ application_name: '' }]);
    await client.query("SET TIME ZONE 'UTC'");
    assert.equal(await codeOf(client.query("SET TimeZone = 'Europe/Berlin'")), '0A000');
    assert.equal(await codeOf(client.query('SET extra_float_digits = 0')), '0A000');
    await client.query('SET extra_float_digits = 3');
  });

  test("statement_timeout cancels a long statement with 57014, as REST's timeout parameter does", async () => {
    const client = await wire.client();
    assert.equal(await codeOf(client.query("SET statement_timeout = 'soon'")), '0A000');
    await client.query("SET statement_timeout = '300ms'");
    assert.deepEqual((await client.query('SHOW statement_timeout')).rows, [{ statement_timeout: '300ms' }]);
    assert.equal(await codeOf(client.query('SELECT count(*) FROM generate_series(1, 3000000000) AS t(x)')), '57014');
    await client.query('RESET statement_timeout');
    assert.deepEqual((await client.query('SELECT 1 AS x')).rows, [{ x: 1 }]);
  });

  test('writes answer their tags; inside BEGIN they are refused, since ROLLBACK could not undo them', async () => {
    const client = await wire.client();
    const insert = await client.query(
      "INSERT INTO shop.customers (id, name, email, country, segment, created_at) VALUES (90001, 'Wire Test', 'w@example.com', 'DE', 'smb', DATE '2024-01-01')",
    );
    assert.equal(insert.command, 'INSERT');
    assert.equal(insert.rowCount, 1);
    const update = await client.query("UPDATE shop.customers SET segment = 'enterprise' WHERE id = 90001");
    assert.deepEqual([update.command, update.rowCount], ['UPDATE', 1]);
    await client.query('BEGIN');
    assert.equal(await codeOf(client.query('DELETE FROM shop.customers WHERE id = 90001')), '25006');
    await client.query('ROLLBACK');
    // Several statements are one transaction in PostgreSQL: with a write among them, refused before any runs.
    assert.equal(await codeOf(client.query('DELETE FROM shop.customers WHERE id = 90001; SELECT * FROM shop.no_such_table')), '25006');
    assert.equal((await client.query('SELECT id FROM shop.customers WHERE id = 90001')).rowCount, 1);
    const deleted = await client.query('DELETE FROM shop.customers WHERE id = 90001');
    assert.deepEqual([deleted.command, deleted.rowCount], ['DELETE', 1]);
  });

  test("statements are in the query log under their user, as REST's are", async () => {
    const bob = await wire.client('bob', 'bob-password-1');
    await bob.query('SELECT 12345 AS logged_marker');
    await codeOf(bob.query('SELECT * FROM shop.orders'));
    const entries = wire.server.services.queryLog.list().filter((e) => e.user === 'bob');
    const ok = entries.find((e) => e.statement.includes('logged_marker'));
    assert.equal(ok?.status, 'ok');
    assert.equal(ok?.rows, 1);
    assert.equal(entries.find((e) => e.statement === 'SELECT * FROM shop.orders')?.status, 'error');
  });

  test('BEGIN, reads, COMMIT; an error fails the block until ROLLBACK', async () => {
    const client = await wire.client();
    assert.equal((await client.query('BEGIN')).command, 'BEGIN');
    assert.equal((await client.query('SELECT 1 AS x')).rowCount, 1);
    assert.equal(await codeOf(client.query('SELECT * FROM shop.no_such_table')), '42P01');
    assert.equal(await codeOf(client.query('SELECT 1')), '25P02');
    assert.equal((await client.query('COMMIT')).command, 'ROLLBACK');
    assert.equal((await client.query('SELECT 1 AS x')).rowCount, 1);
  });
});

describe('portals, vanishing clients and cancel', () => {
  test('Execute with a row limit: PortalSuspended, then the rest without recomputing', async () => {
    const raw = await RawClient.connect(wire.listener.port, database);
    raw.send('P', body('', 'SELECT x FROM generate_series(1, 5) AS t(x) ORDER BY x', { i16: 0 }));
    raw.send('B', body('p1', '', { i16: 0 }, { i16: 0 }, { i16: 0 }));
    raw.send('E', body('p1', { i32: 2 }));
    raw.send('H', Buffer.alloc(0));
    const first = await raw.until('s');
    assert.deepEqual(
      first.filter((m) => m.type === 'D').map((m) => m.body.subarray(6).toString()),
      ['1', '2'],
    );
    raw.send('E', body('p1', { i32: 2 }));
    raw.send('E', body('p1', { i32: 2 }));
    raw.send('S', Buffer.alloc(0));
    const rest = await raw.until('Z');
    assert.deepEqual(
      rest.filter((m) => m.type === 'D').map((m) => m.body.subarray(6).toString()),
      ['3', '4', '5'],
    );
    assert.deepEqual(
      rest
        .filter((m) => m.type === 's' || m.type === 'C')
        .map((m) => (m.type === 'C' ? m.body.toString('utf8', 0, m.body.length - 1) : 's')),
      ['s', 'SELECT 5'],
    );
    raw.close();
  });

  test('a client that vanishes mid-result: its session ends, its statement is released, the server goes on', async () => {
    const raw = await RawClient.connect(wire.listener.port, database);
    raw.send('Q', body("SELECT x, repeat('y', 100) FROM generate_series(1, 2000000) AS t(x)"));
    await raw.until('D');
    raw.close();
    const deadline = Date.now() + 20_000;
    while ((wire.listener.sessions > 0 || wire.server.services.lifecycle.inFlight > 0) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.equal(wire.server.services.lifecycle.inFlight, 0, 'no statement left running');
    const client = await wire.client();
    assert.deepEqual((await client.query('SELECT 5 AS five')).rows, [{ five: 5 }]);
  });

  test('a client that stops reading holds the rows back: the server reads no further than the socket buffers', async () => {
    const resultBytes = async () => Number(/^vdb_result_bytes_total (\d+)/m.exec(await wire.server.services.metrics.text())?.[1] ?? 0);
    const raw = await RawClient.connect(wire.listener.port, database);
    try {
      const start = await resultBytes();
      raw.socket.pause();
      raw.send('Q', body("SELECT x, repeat('y', 200) FROM generate_series(1, 5000000) AS t(x)"));
      // Wait until the server stops reading (two counts 700 ms apart the same).
      let previous = -1;
      let current = await resultBytes();
      const deadline = Date.now() + 20_000;
      while (current !== previous && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 700));
        previous = current;
        current = await resultBytes();
      }
      assert.equal(current, previous, 'the server stopped reading rows for a client that reads nothing');
      // 5M rows are about 1 GB of JSON; a stalled client holds the server within a few MB of it.
      assert.ok(current - start < 64 * 1024 * 1024, `read ${current - start} bytes for a client that reads nothing`);
    } finally {
      raw.close();
    }
  });

  test('a CancelRequest cancels the running statement with 57014', async () => {
    const raw = await RawClient.connect(wire.listener.port, database);
    raw.send('Q', body('SELECT count(*) FROM generate_series(1, 3000000000) AS t(x)'));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const cancel = net.connect(wire.listener.port, '127.0.0.1');
    await new Promise((resolve) => cancel.once('connect', resolve));
    const packet = Buffer.alloc(16);
    packet.writeInt32BE(16);
    packet.writeInt32BE(80877102, 4);
    packet.writeInt32BE(raw.processId, 8);
    packet.writeInt32BE(raw.secret, 12);
    cancel.end(packet);
    const messages = await raw.until('Z');
    const error = messages.find((m) => m.type === 'E');
    assert.ok(error, 'an ErrorResponse');
    assert.match(error.body.toString(), /C57014/);
    raw.close();
  });
});
