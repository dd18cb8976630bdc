/**
 * File roots are no path oracle: creating a file, SQLite or DuckDB source at a path outside the
 * roots (fileRoots) gets one answer, the same status and byte for byte the same body, whether
 * the path exists, is a file or a folder, is written with `..`, or is a symbolic link inside the
 * roots to any of these. Paths inside the roots still say what is wrong with them.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { locateInRoots, outsideRoots } from '../../src/connectors/files/paths.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('file roots answer the same for every path outside them', () => {
  let server: TestServer;
  let outside: string;
  let root: string;
  const cases: Record<string, string> = {};

  before(async () => {
    server = await startTestServer();
    root = path.join(server.dataDir, 'files');
    outside = fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-outside-'));
    fs.mkdirSync(path.join(outside, 'folder'));
    fs.writeFileSync(path.join(outside, 'folder', 'data.csv'), 'a,b\n1,2\n');
    fs.writeFileSync(path.join(outside, 'file.db'), 'not a database');
    fs.mkdirSync(path.join(root, 'mine'));
    fs.writeFileSync(path.join(root, 'mine', 'data.csv'), 'a,b\n1,2\n');
    const link = (name: string, target: string) => {
      fs.symlinkSync(target, path.join(root, name));
      return path.join(root, name);
    };
    Object.assign(cases, {
      'an existing folder': path.join(outside, 'folder'),
      'an existing file': path.join(outside, 'file.db'),
      'a file in an existing folder': path.join(outside, 'folder', 'data.csv'),
      nothing: path.join(outside, 'nothing'),
      'nothing in a missing folder': path.join(outside, 'missing', 'nothing'),
      'the root of the file system': '/',
      '.. out of a root': path.join(root, '..', '..'),
      'a link in a root to a folder': link('to-folder', path.join(outside, 'folder')),
      'a link in a root to a file': link('to-file', path.join(outside, 'file.db')),
      'a link in a root to nothing': link('to-nothing', path.join(outside, 'nothing')),
      'a link in a root to a link to nothing': link('to-link', path.join(root, 'to-nothing')),
      'a missing path under a link in a root': path.join(root, 'to-folder', 'missing'),
    });
  });
  after(async () => {
    await server.close();
    fs.rmSync(outside, { recursive: true, force: true });
  });

  const create = (template: string, property: string, where: string) =>
    server.request('/rest/api/source', { body: { name: 'probe', template, connectionProps: `${property}=${where}` } });

  test('one status and one body for every case and every kind of file source', async () => {
    const answers = new Map<string, string>();
    for (const [template, property] of [
      ['file', 'ParentDirectory'],
      ['sqlite', 'path'],
      ['duckdb', 'path'],
    ]) {
      for (const [what, where] of Object.entries(cases)) {
        const answer = await create(template!, property!, where);
        answers.set(`${template}: ${what}`, `${answer.status} ${await answer.text()}`);
      }
    }
    const distinct = new Set(answers.values());
    assert.equal(distinct.size, 1, [...answers].map(([what, text]) => `${what}: ${text}`).join('\n'));
    const [text] = distinct;
    assert.ok(text!.startsWith('503 '), text);
    const body = JSON.parse(text!.slice(4)) as { title: string; description: string; hint: string };
    assert.deepEqual(Object.keys(body).sort(), ['description', 'hint', 'title']);
    assert.equal(body.description, `Data source "probe" cannot be reached: the path lies outside the allowed file roots (${root})`);
    assert.ok(!text!.includes(outside), 'nothing of the outside path is echoed');
  });

  test('inside the roots: a folder or a link to one works, a missing path says so', async () => {
    const made = await create('file', 'ParentDirectory', path.join(root, 'mine'));
    assert.ok(made.status < 300, await made.text());
    assert.equal((await server.request('/rest/api/source/probe', { method: 'DELETE' })).status < 300, true);
    fs.symlinkSync(path.join(root, 'mine'), path.join(root, 'to-mine'));
    const linked = await create('file', 'ParentDirectory', path.join(root, 'to-mine'));
    assert.ok(linked.status < 300, await linked.text());
    assert.equal((await server.request('/rest/api/source/probe', { method: 'DELETE' })).status < 300, true);
    const missing = await create('file', 'ParentDirectory', path.join(root, 'missing'));
    assert.equal(missing.status, 503);
    assert.match(((await missing.json()) as { description: string }).description, /folder not found/);
    const file = await create('file', 'ParentDirectory', path.join(root, 'mine', 'data.csv'));
    assert.equal(file.status, 503);
    assert.match(((await file.json()) as { description: string }).description, /not a folder/);
    // `..` is resolved as written (as Node's fs does, and the real path found is what is opened):
    // after a link in the root it stays in the root, whatever lies beside the link's target.
    const dotted = await create('file', 'ParentDirectory', `${path.join(root, 'to-folder')}${path.sep}..${path.sep}folder`);
    assert.equal(dotted.status, 503);
    assert.match(((await dotted.json()) as { description: string }).description, /folder not found/);
    const sqlite = await create('sqlite', 'path', path.join(root, 'missing.db'));
    assert.match(((await sqlite.json()) as { description: string }).description, /SQLite file not found/);
  });
});

describe('locateInRoots', () => {
  let base: string;
  before(() => {
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-roots-')));
    fs.mkdirSync(path.join(base, 'real-root', 'inside'), { recursive: true });
    fs.symlinkSync(path.join(base, 'real-root'), path.join(base, 'root-link'));
  });
  after(() => fs.rmSync(base, { recursive: true, force: true }));

  test('a root that is a link counts by its real path too; outside answers the same error', () => {
    const roots = [path.join(base, 'root-link')];
    assert.deepEqual(locateInRoots(path.join(base, 'real-root', 'inside'), roots), {
      real: path.join(base, 'real-root', 'inside'),
      exists: true,
    });
    assert.deepEqual(locateInRoots(path.join(base, 'root-link', 'later'), roots), {
      real: path.join(base, 'real-root', 'later'),
      exists: false,
    });
    const expected = outsideRoots(roots).message;
    for (const where of [base, path.join(base, 'nothing'), '/', 'relative/path']) {
      assert.throws(
        () => locateInRoots(where, roots),
        (err: Error) => err.message === expected && err.name === 'SourceUnreachableError',
      );
    }
  });
});
