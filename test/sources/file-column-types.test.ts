/**
 * A file source's schema file declares column types (docs/sources.md, "Column types of CSV and
 * JSON files"): declared columns keep PostgreSQL's types and exact values, the others are
 * inferred, and a type off the list makes the source unreachable with a message naming it.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
let folder: string;

before(async () => {
  server = await startTestServer();
  folder = path.join(server.dataDir, 'files', 'typed');
  fs.mkdirSync(folder, { recursive: true });
  fs.writeFileSync(path.join(folder, 'prices.csv'), 'id,amount,note,day\n1,1.10,x,2024-01-02\n2,2.5,,2024-01-03\n');
  fs.writeFileSync(
    path.join(folder, 'prices.schema.json'),
    JSON.stringify({ columns: { id: 'int', amount: 'numeric(10,2)', note: 'text' } }),
  );
  fs.writeFileSync(path.join(folder, 'inferred.csv'), 'id,amount\n1,1.10\n');
});
after(async () => {
  await server?.close();
});

async function query(sql: string): Promise<{ status: number; body: string; types: string | null }> {
  const response = await server.request('/rest/api/query', { body: { sql } });
  return { status: response.status, body: await response.text(), types: response.headers.get('sql-column-types') };
}

test('declared columns keep their types and exact values; the rest is inferred; the schema file is no table', async () => {
  const added = await server.request('/rest/api/source', {
    body: { name: 'typed', template: 'file', connectionProps: `ParentDirectory=${folder}` },
  });
  assert.equal(added.status, 201, await added.text());
  const typed = await query('SELECT id, amount, note, day FROM typed.prices ORDER BY id');
  assert.equal(typed.status, 200, typed.body);
  assert.equal(typed.types, '["INTEGER","DECIMAL(10,2)","VARCHAR","DATE"]');
  assert.equal(typed.body, '[[1,1.10,"x","2024-01-02"],[2,2.50,null,"2024-01-03"]]');
  // Undeclared decimal text is numeric with the scale of its values (file-types.test.ts).
  const inferred = await query('SELECT amount FROM typed.inferred');
  assert.equal(inferred.types, '["DECIMAL(18,2)"]');
  assert.equal(inferred.body, '[[1.10]]');
  const tables = await query("SELECT Name FROM SYS.Tables WHERE SchemaName = 'typed' ORDER BY Name");
  assert.equal(tables.body, '[["inferred"],["prices"]]');
});

test('a type off the list makes the source unreachable, naming the file and the column', async () => {
  const bad = path.join(server.dataDir, 'files', 'badtyped');
  fs.mkdirSync(bad);
  fs.writeFileSync(path.join(bad, 'a.csv'), 'x\n1\n');
  fs.writeFileSync(path.join(bad, 'a.schema.json'), JSON.stringify({ columns: { x: 'money' } }));
  const response = await server.request('/rest/api/source', {
    body: { name: 'badtyped', template: 'file', connectionProps: `ParentDirectory=${bad}` },
  });
  const body = await response.text();
  assert.equal(response.status, 503, body);
  assert.match(body, /a\.schema\.json, column \\"x\\": type \\"money\\" cannot be declared/);
});
