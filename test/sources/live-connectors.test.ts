/**
 * The live connectors of sources (src/sources/live-connectors.ts), with real SQLite files and a
 * file source's folder in a temporary directory, no database server: a connector is reused while
 * its source's definition is the same, replaced (the old one closed once the new one is in place)
 * when it changes, closed when retired, and built on demand only for the catalog's definition.
 * Whether a connector is closed is read from the process's open files (/proc/self/fd).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import type { SourceDef } from '../../src/catalog/types.js';
import type { ConnectorContext } from '../../src/connectors/factory.js';
import type { Connector } from '../../src/connectors/types.js';
import { LiveConnectors } from '../../src/sources/live-connectors.js';

const source = (name: string, kind: 'sqlite' | 'file', connection: Record<string, string>, oid: number): SourceDef => ({
  name,
  kind,
  connection,
  secrets: {},
  model: {},
  translator: {},
  description: null,
  readOnly: true,
  createdAt: '2026-11-28T00:00:00Z',
  tables: [],
  oid,
});

/** How many times this process has `file` open. */
function openCount(file: string): number {
  const fds = fs.readdirSync('/proc/self/fd');
  return fds.filter((fd) => {
    try {
      return fs.readlinkSync(path.join('/proc/self/fd', fd)) === file;
    } catch {
      return false; // closed since it was listed
    }
  }).length;
}

function fixture(): { dir: string; a: string; b: string; context: ConnectorContext } {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-live-connectors-')));
  const a = path.join(dir, 'a.db');
  const b = path.join(dir, 'b.db');
  for (const file of [a, b]) {
    const db = new Database(file);
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY)');
    db.close();
  }
  const context: ConnectorContext = {
    roots: [dir],
    openSecret: (sealed) => sealed,
    sealSecret: (plain) => plain,
    describe: async () => [],
    parquetRowCount: async () => 0,
    engineQuery: async () => [],
  };
  return { dir, a, b, context };
}

test('a connector is reused while the definition is the same, replaced and the old one closed when it changes', async () => {
  const { dir, a, b, context } = fixture();
  const catalog = new Map<string, SourceDef>();
  const live = new LiveConnectors(context, (name) => catalog.get(name));
  try {
    const first = source('lite', 'sqlite', { path: a }, 1);
    catalog.set('lite', first);
    const held = live.build(first);
    await held.healthCheck();
    assert.equal(openCount(a), 1);
    // The same definition (another copy of it, as a shared catalog reloads it): the same connector.
    assert.equal(live.connectorOf(first), held);
    assert.equal(live.builtFromSame('lite', structuredClone(first)), true);

    // Another instance moved the source to another file: no longer the definition it was built from.
    const moved = { ...first, connection: { path: b } };
    assert.equal(live.builtFromSame('lite', moved), false);
    let openWhileInstalling = -1;
    const replacement = await live.replace(moved, async (next) => {
      await next.healthCheck();
      // The old connector still open while the new one is put in place.
      openWhileInstalling = openCount(a);
    });
    assert.equal(openWhileInstalling, 1);
    assert.notEqual(replacement, held);
    assert.equal(live.get('lite'), replacement);
    assert.equal(live.builtFromSame('lite', moved), true);
    assert.equal(openCount(a), 0, 'the replaced connector is closed');
    assert.equal(openCount(b), 1);

    assert.deepEqual(await live.retire('lite'), moved);
    assert.equal(live.has('lite'), false);
    assert.equal(openCount(b), 0, 'a retired connector is closed');
    assert.equal(await live.retire('lite'), undefined);
  } finally {
    await live.closeAll();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('built on demand only for the catalog definition; engine folders; all closed at the end', async () => {
  const { dir, a, context } = fixture();
  const catalog = new Map<string, SourceDef>();
  const onDemand: Array<[string, Connector]> = [];
  const live = new LiveConnectors(
    context,
    (name) => catalog.get(name),
    (def, connector) => onDemand.push([def.name, connector]),
  );
  try {
    const lite = source('lite', 'sqlite', { path: a }, 1);
    const files = source('files', 'file', { ParentDirectory: dir }, 2);
    // Not (or not yet) the catalog's definition: no connector.
    assert.throws(() => live.connectorOf(lite), /no connector for source lite/);
    catalog.set('lite', lite);
    catalog.set('files', files);
    assert.throws(() => live.connectorOf(structuredClone(lite)), /no connector for source lite/);

    const built = live.connectorOf(lite);
    assert.equal(live.connectorOf(lite), built);
    assert.deepEqual(onDemand, [['lite', built]], 'told once, when built');
    const folderSource = live.build(files);
    assert.equal(folderSource.delivery, 'engine');
    assert.deepEqual(live.engineFolders(), [dir], 'only engine-read sources have folders');
    assert.deepEqual(
      live.entries().map(([name]) => name),
      ['lite', 'files'],
    );

    // A definition not held is the caller's to close.
    const draft = live.create(source('draft', 'sqlite', { path: a }, 3));
    await draft.healthCheck();
    await built.healthCheck();
    assert.equal(openCount(a), 2);
    await draft.close();
    assert.equal(live.has('draft'), false);
    assert.equal(openCount(a), 1);

    await live.closeAll();
    assert.equal(openCount(a), 0);
  } finally {
    await live.closeAll();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
