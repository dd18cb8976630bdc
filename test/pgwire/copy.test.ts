/**
 * COPY ... TO STDOUT through psql, compared byte for byte with PostgreSQL's own output for the
 * same query, in text and CSV formats; COPY FROM and copies to files refused.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, test } from 'node:test';
import { startWireServer, type WireServer } from './helpers.js';

let wire: WireServer;
before(async () => {
  wire = await startWireServer();
});
after(async () => wire.close());

/** psql's output of `command` against PostgreSQL itself. */
function postgresPsql(command: string): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile('/usr/bin/psql', ['-h', '127.0.0.1', '-U', 'postgres', '-d', 'test', '-X', '-At', '-c', command], (err, stdout, stderr) =>
      err ? reject(new Error(stderr)) : resolve(stdout),
    ),
  );
}

const QUERY = `SELECT 1 AS a, E'tab\\there' AS b, NULL::text AS c, 'q"u,o' AS d, E'line\\nbreak' AS e, 1.5::float8 AS f,
  DATE '2024-01-02' AS g, true AS h, '' AS i, E'back\\\\slash' AS j`;

for (const options of ['', ' WITH (FORMAT csv)', ' WITH (FORMAT csv, HEADER)', " WITH (DELIMITER '|', NULL 'nil')"]) {
  test(`COPY (query) TO STDOUT${options} writes what PostgreSQL writes`, async () => {
    const command = `COPY (${QUERY}) TO STDOUT${options}`;
    const expected = await postgresPsql(command);
    const actual = await wire.psql(command);
    assert.equal(actual.stderr, '');
    assert.equal(actual.stdout, expected);
  });
}

test("psql's \\copy of a table, and COPY table (columns) TO STDOUT", async () => {
  const copied = await wire.psql('\\copy (SELECT id, country FROM shop.customers ORDER BY id LIMIT 2) to stdout with csv');
  assert.equal(copied.stdout, '1,DE\n2,IT\n', copied.stderr);
  const table = await wire.psql('COPY shop.customers (id) TO STDOUT');
  assert.equal(table.code, 0, table.stderr);
  assert.ok(table.stdout.split('\n').length > 10);
});

test('COPY FROM and COPY to a file are refused', async () => {
  const from = await wire.psql('COPY shop.customers FROM STDIN');
  assert.match(from.stderr, /COPY FROM/);
  const file = await wire.psql("COPY shop.customers TO '/tmp/x'");
  assert.match(file.stderr, /TO STDOUT/);
});
