/**
 * The extended protocol's less common paths, in raw messages: Describe of a statement
 * (ParameterDescription and the columns before any Bind), parameters and results in binary
 * format, a binary column vdb cannot encode refused; and the listener started with vdb itself.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { startServer } from '../../src/server/start.js';
import { ADMIN_PASSWORD } from '../helpers/server.js';
import { body, RawClient, startWireServer, type WireServer } from './helpers.js';

let wire: WireServer;
before(async () => {
  wire = await startWireServer();
});
after(async () => wire.close());

const connect = () => RawClient.connect(wire.listener.port, wire.server.services.config.vdbName);

test('Describe of a statement: parameter types, then the columns with their OIDs', async () => {
  const raw = await connect();
  try {
    raw.send('P', body('s1', 'SELECT id, name FROM shop.customers WHERE id = $1', { i16: 1 }, { i32: 20 }));
    raw.send('D', Buffer.concat([Buffer.from('S'), body('s1')]));
    raw.send('S', Buffer.alloc(0));
    const messages = await raw.until('Z');
    assert.deepEqual(
      messages.map((m) => m.type),
      ['1', 't', 'T', 'Z'],
    );
    const parameters = messages[1]!.body;
    assert.equal(parameters.readInt16BE(0), 1);
    assert.equal(parameters.readInt32BE(2), 20);
    const columns = messages[2]!.body;
    assert.equal(columns.readInt16BE(0), 2);
    const firstName = columns.indexOf(0, 2);
    assert.equal(columns.toString('utf8', 2, firstName), 'id');
    assert.equal(columns.readInt32BE(firstName + 1 + 6), 20, 'id is int8');
  } finally {
    raw.close();
  }
});

test('parameters and results in binary format', async () => {
  const raw = await connect();
  try {
    const param = Buffer.alloc(8);
    param.writeBigInt64BE(3n);
    raw.send('P', body('', 'SELECT id, id * 1.5::float8 AS f, id > 2 AS b FROM shop.customers WHERE id = $1', { i16: 1 }, { i32: 20 }));
    raw.send('B', Buffer.concat([body('', '', { i16: 1 }, { i16: 1 }, { i16: 1 }, { i32: 8 }), param, body({ i16: 1 }, { i16: 1 })]));
    raw.send('E', body('', { i32: 0 }));
    raw.send('S', Buffer.alloc(0));
    const messages = await raw.until('Z');
    const row = messages.find((m) => m.type === 'D')!.body;
    assert.equal(row.readInt16BE(0), 3);
    assert.equal(row.readInt32BE(2), 8);
    assert.equal(row.readBigInt64BE(6), 3n);
    assert.equal(row.readInt32BE(14), 8);
    assert.equal(row.readDoubleBE(18), 4.5);
    assert.equal(row.readInt32BE(26), 1);
    assert.equal(row[30], 1);
  } finally {
    raw.close();
  }
});

test('a column vdb cannot write in binary is refused with 0A000, and the session goes on after Sync', async () => {
  const raw = await connect();
  try {
    raw.send('P', body('', "SELECT DATE '2024-01-02' AS d", { i16: 0 }));
    raw.send('B', body('', '', { i16: 0 }, { i16: 0 }, { i16: 1 }, { i16: 1 }));
    raw.send('E', body('', { i32: 0 }));
    raw.send('S', Buffer.alloc(0));
    const failed = await raw.until('Z');
    assert.match(failed.find((m) => m.type === 'E')!.body.toString(), /C0A000/);
    raw.send('Q', body('SELECT 1'));
    const after = await raw.until('Z');
    assert.ok(after.some((m) => m.type === 'D'));
  } finally {
    raw.close();
  }
});

test('vdb serve starts the listener beside HTTP', async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-pgwire-start-'));
  const running = await startServer({ dataDir, port: 0, host: '127.0.0.1', adminPassword: ADMIN_PASSWORD, logLevel: 'silent' });
  try {
    assert.ok(running.pgwire);
    const [host, port] = running.pgwire.split(':');
    const client = new pg.Client({ host, port: Number(port), user: 'admin', password: ADMIN_PASSWORD, database: 'vdb' });
    await client.connect();
    assert.deepEqual((await client.query('SELECT 1 AS one')).rows, [{ one: 1 }]);
    await client.end();
  } finally {
    await running.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});

test('Describe of a write statement runs nothing: NoData, and no row is written', async () => {
  const raw = await connect();
  try {
    raw.send('P', body('w1', 'DELETE FROM shop.customers WHERE id = $1', { i16: 0 }));
    raw.send('D', Buffer.concat([Buffer.from('S'), body('w1')]));
    raw.send('P', body('w2', "SET application_name = 'x'", { i16: 0 }));
    raw.send('D', Buffer.concat([Buffer.from('S'), body('w2')]));
    raw.send('S', Buffer.alloc(0));
    const messages = await raw.until('Z');
    assert.deepEqual(
      messages.map((m) => m.type),
      ['1', 't', 'n', '1', 't', 'n', 'Z'],
    );
  } finally {
    raw.close();
  }
});

test('a malformed message is a protocol violation (08P01); the session goes on after Sync', async () => {
  const raw = await connect();
  try {
    raw.send('P', body('', 'SELECT 1', { i16: 0 }));
    raw.send('B', Buffer.from([0, 0, 0x7f]));
    raw.send('S', Buffer.alloc(0));
    const failed = await raw.until('Z');
    assert.match(failed.find((m) => m.type === 'E')!.body.toString(), /C08P01/);
    raw.send('Q', body('SELECT 1'));
    assert.ok((await raw.until('Z')).some((m) => m.type === 'D'));
  } finally {
    raw.close();
  }
});
