/**
 * The console as a workbench: exact values from a real PostgreSQL table, work that survives
 * moving between screens and reloads, scripts and the statement at the cursor, the schema tree,
 * errors marked in the editor.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type pg from 'pg';
import type { Page } from 'playwright-core';
import { pgClient, uniqueTag } from '../connectors/db.js';
import { ADMIN_PASSWORD } from '../helpers/server.js';
import { clipboardHolds, noBrowser, screenshot, setSql, signIn, startConsole, type ConsoleHarness } from './browser.js';

describe('console: a workbench that keeps values and work', { skip: noBrowser }, () => {
  let h: ConsoleHarness;
  let page: Page;
  let postgres: pg.Client;
  const schema = uniqueTag();
  before(async () => {
    postgres = await pgClient();
    await postgres.query(`CREATE SCHEMA ${schema}`);
    await postgres.query(
      `CREATE TABLE ${schema}.exact (id int, big bigint, dec numeric(38,5), money numeric(10,2), f double precision, d date, j jsonb, t text)`,
    );
    await postgres.query(
      `INSERT INTO ${schema}.exact VALUES
        (1, 9007199254740993, 12345678901234.56789, 64.10, 0.1, '2024-02-29', '{"n": 12345678901234567890, "x": [1.50, null]}', 'a'),
        (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
        (3, -9223372036854775808, -0.00001, 0.00, 1e300, '0001-01-01', '[]', '')`,
    );
    // A statement that takes two seconds, sent whole to PostgreSQL.
    await postgres.query(`CREATE VIEW ${schema}.slow AS SELECT 42 AS answer FROM pg_sleep(2)`);
    h = await startConsole();
    const added = await h.server.request('/rest/api/source', {
      body: {
        name: 'exact',
        template: 'postgresql',
        connectionProps: 'host=127.0.0.1,port=5432,database=test,user-name=postgres',
        modelProps: `importer.schemaPattern=${schema}`,
      },
    });
    assert.equal(added.status, 201, await added.text());
    ({ page } = await h.newPage());
    await signIn(page);
  });
  after(async () => {
    await h?.close();
    await postgres?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await postgres?.end();
  });

  const cells = (row: number) => page.getByTestId('grid').locator(`[data-row="${row}"] [role=gridcell]`).allInnerTexts();

  it('shows, copies and downloads values exactly as the API sends them', async () => {
    await setSql(page, 'SELECT * FROM exact.exact ORDER BY id');
    await page.keyboard.press('Control+Enter');
    await page.getByTestId('row-count').filter({ hasText: '3 rows' }).waitFor();
    const json = '{"n": 12345678901234567890, "x": [1.50, null]}';
    assert.deepEqual(await cells(0), ['1', '9007199254740993', '12345678901234.56789', '64.10', '0.1', '2024-02-29', json, 'a']);
    assert.deepEqual(await cells(1), ['2', 'NULL', 'NULL', 'NULL', 'NULL', 'NULL', 'NULL', 'NULL']);
    assert.deepEqual(await cells(2), ['3', '-9223372036854775808', '-0.00001', '0.00', '1e+300', '0001-01-01', '[]', '']);
    // What the API sent, digit for digit.
    const raw = await (await h.server.request('/rest/api/query', { body: { sql: 'SELECT * FROM exact.exact ORDER BY id' } })).text();
    assert.ok(raw.includes('[1,9007199254740993,12345678901234.56789,64.10,0.1,"2024-02-29",{"n": 12345678901234567890'), raw);
    // Copy a cell and a row.
    await page.getByTestId('grid').locator('[data-row="0"] [role=gridcell]').nth(1).click();
    await page.getByRole('button', { name: 'Copy cell' }).click();
    await clipboardHolds(page, '9007199254740993');
    await page.getByRole('button', { name: 'Copy row' }).click();
    await clipboardHolds(page, `1\t9007199254740993\t12345678901234.56789\t64.10\t0.1\t2024-02-29\t${json}\ta`);
    // The CSV download, as vdb wrote it.
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('csv').click()]);
    let text = '';
    for await (const chunk of await download.createReadStream()) text += String(chunk);
    assert.equal(
      text,
      'id,big,dec,money,f,d,j,t\r\n' +
        `1,9007199254740993,12345678901234.56789,64.10,0.1,2024-02-29,"${json.replace(/"/g, '""')}",a\r\n` +
        '2,,,,,,,\r\n' +
        '3,-9223372036854775808,-0.00001,0.00,1e+300,0001-01-01,[],""\r\n',
    );
    // The other formats the API serves, as vdb wrote them.
    const fetchAs = async (format: string) => {
      await page.getByTestId('download-format').selectOption(format);
      const [file] = await Promise.all([page.waitForEvent('download'), page.getByTestId('csv').click()]);
      const chunks: Buffer[] = [];
      for await (const chunk of await file.createReadStream()) chunks.push(chunk as Buffer);
      return { name: file.suggestedFilename(), bytes: Buffer.concat(chunks) };
    };
    const asJson = await fetchAs('json');
    assert.equal(asJson.name, 'result.json');
    assert.match(asJson.bytes.toString(), /^\[\{"id":1,"big":9007199254740993,"dec":12345678901234.56789,"money":64.10,/);
    assert.equal((JSON.parse(asJson.bytes.toString()) as unknown[]).length, 3);
    const asNdjson = await fetchAs('ndjson');
    assert.equal(asNdjson.bytes.toString().trim().split('\n').length, 3);
    assert.match(asNdjson.bytes.toString(), /"money":0\.00/);
    const asParquet = await fetchAs('parquet');
    assert.equal(asParquet.name, 'result.parquet');
    assert.equal(asParquet.bytes.subarray(0, 4).toString(), 'PAR1');
    const asArrow = await fetchAs('arrow');
    assert.equal(asArrow.name, 'result.arrows');
    assert.equal(asArrow.bytes.readUInt32LE(0), 0xffffffff, 'an Arrow IPC stream starts with a continuation marker');
    await page.getByTestId('download-format').selectOption('csv');
    // The value viewer: JSON laid out, digits kept; Enter or a double click opens it.
    await page.getByTestId('grid').locator('[data-row="0"] [role=gridcell]').nth(6).dblclick();
    const viewer = page.getByTestId('value-viewer');
    assert.equal(await viewer.locator('pre').innerText(), '{\n  "n": 12345678901234567890,\n  "x": [\n    1.50,\n    null\n  ]\n}');
    await viewer.getByRole('button', { name: 'Close' }).click();
    await page.getByTestId('grid').focus();
    await page.keyboard.press('ArrowLeft');
    await page.keyboard.press('Enter');
    assert.equal(await viewer.locator('pre').innerText(), '2024-02-29');
    await viewer.getByRole('button', { name: 'Close' }).click();
    // A column made wider by dragging its edge, and narrower from the keyboard.
    const header = page.getByTestId('grid').locator('[role=columnheader]').nth(7);
    const before = (await header.boundingBox())!.width;
    const edge = (await header.getByTestId('column-resize').boundingBox())!;
    await page.mouse.move(edge.x + edge.width / 2, edge.y + edge.height / 2);
    await page.mouse.down();
    await page.mouse.move(edge.x + edge.width / 2 + 150, edge.y + edge.height / 2, { steps: 5 });
    await page.mouse.up();
    const wider = (await header.boundingBox())!.width;
    assert.ok(Math.abs(wider - before - 150) < 3, `${before} -> ${wider}`);
    await header.getByTestId('column-resize').focus();
    await page.keyboard.press('ArrowLeft');
    assert.ok(Math.abs((await header.boundingBox())!.width - (wider - 20)) < 3);
    // Sorting, in the browser (every row is loaded): exact numbers, NULLs as PostgreSQL puts them.
    const sortBy = (name: string) =>
      page
        .getByTestId('grid')
        .getByTestId('sort')
        .filter({ hasText: new RegExp(`^${name}`) })
        .click();
    const ids = async () => [(await cells(0))[0], (await cells(1))[0], (await cells(2))[0]];
    await sortBy('money');
    assert.deepEqual(await ids(), ['3', '1', '2']);
    await sortBy('money');
    assert.deepEqual(await ids(), ['2', '1', '3']);
    assert.equal(
      await page
        .getByTestId('grid')
        .locator('[role=columnheader][aria-sort=descending]')
        .innerText()
        .then((t) => t.split('\n')[0]),
      'money ▼',
    );
    await sortBy('money');
    assert.deepEqual(await ids(), ['1', '2', '3']);
    await sortBy('dec');
    assert.deepEqual(await ids(), ['3', '1', '2']);
    // Numbers are right-aligned as numbers, whatever their size.
    assert.match((await page.getByTestId('grid').locator('[data-row="0"] [role=gridcell]').nth(1).getAttribute('class')) ?? '', /\bnum\b/);
  });

  const status = () => page.getByTestId('run-status').innerText();
  const logStatus = async (like: string) => {
    const res = await h.server.request('/rest/api/query', {
      body: { sql: `SELECT "Status" FROM SYSLOG.QueryLog WHERE "Statement" LIKE '${like}' ORDER BY "ID" DESC LIMIT 1` },
    });
    return ((await res.json()) as unknown[][])[0]?.[0];
  };

  it('keeps a running statement and its result while the user visits other screens and reloads', async () => {
    await setSql(page, 'SELECT answer FROM exact.slow');
    await page.getByTestId('run').click();
    await page.getByTestId('run-status').filter({ hasText: 'Running' }).waitFor();
    await page.getByRole('link', { name: 'History', exact: true }).click();
    await page.getByRole('heading', { name: 'Query history' }).waitFor();
    await page.getByRole('link', { name: 'SQL', exact: true }).click();
    // Still running, or already done: never cancelled.
    assert.doesNotMatch(await status(), /Cancelled|Stopped/);
    await page.getByTestId('row-count').filter({ hasText: '1 row' }).waitFor();
    assert.deepEqual(await cells(0), ['42']);
    assert.equal(await logStatus('SELECT answer FROM exact.slow'), 'ok');
    // Sources and back: the result is still there, with the editor's text.
    await page.getByRole('link', { name: 'Sources', exact: true }).click();
    await page.getByRole('heading', { name: 'Sources' }).first().waitFor();
    await page.getByRole('link', { name: 'SQL', exact: true }).click();
    assert.deepEqual(await cells(0), ['42']);
    // A reload: the result is read again from its cursor.
    await page.reload();
    await page.getByTestId('row-count').filter({ hasText: '1 row' }).waitFor();
    assert.deepEqual(await cells(0), ['42']);
    assert.equal(await page.getByTestId('sql-editor').innerText(), 'SELECT answer FROM exact.slow');
  });

  it('asks before a reload cuts a running statement off, and says so afterwards', async () => {
    await page.getByTestId('run').click();
    await page.getByTestId('run-status').filter({ hasText: 'Running' }).waitFor();
    const dialogs: string[] = [];
    page.once('dialog', (d) => {
      dialogs.push(d.type());
      void d.accept();
    });
    await page.reload();
    assert.deepEqual(dialogs, ['beforeunload']);
    await page.getByTestId('run-status').filter({ hasText: 'Stopped by the page reload' }).waitFor();
  });

  it('runs a script statement by statement, the statement at the cursor, or the selection', async () => {
    await setSql(page, "SELECT 1 AS a;\nSELECT 'x;y' AS b; -- a comment; with a semicolon\nSELECT $$;$$ AS c, 3 AS d;");
    await page.getByTestId('run-script').click();
    const tabs = page.getByTestId('result-tab');
    await tabs.nth(2).filter({ hasText: '✓' }).waitFor();
    assert.equal(await tabs.count(), 3);
    // The last result is shown; the others are a click away.
    assert.deepEqual(await cells(0), [';', '3']);
    await tabs.nth(0).click();
    assert.deepEqual(await cells(0), ['1']);
    await tabs.nth(1).click();
    assert.deepEqual(await cells(0), ['x;y']);
    // The statement at the cursor: line 2.
    await page.getByTestId('sql-editor').click();
    await page.keyboard.press('Control+Home');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Control+Enter');
    await page.getByTestId('row-count').filter({ hasText: '1 row' }).waitFor();
    assert.equal(await tabs.count(), 0);
    assert.deepEqual(await cells(0), ['x;y']);
    assert.equal(
      await page
        .getByTestId('grid')
        .locator('[role=columnheader]')
        .nth(1)
        .innerText()
        .then((t) => t.split('\n')[0]),
      'b',
    );
    // The selection: line 1 without its semicolon.
    await page.keyboard.press('Control+Home');
    await page.keyboard.press('Shift+End');
    await page.keyboard.press('Control+Enter');
    await page.getByTestId('grid').locator('[role=columnheader]').nth(1).filter({ hasText: 'a' }).waitFor();
    assert.deepEqual(await cells(0), ['1']);
  });

  it('marks errors in the editor where they are, and stops a script at the first', async () => {
    await setSql(page, 'SELECT 1;\nSELECT nosuch FROM exact.exact;\nSELECT 3');
    await page.getByTestId('run-script').click();
    const mark = page.getByTestId('error-mark');
    await mark.waitFor();
    assert.equal(await mark.innerText(), 'nosuch');
    assert.match((await mark.getAttribute('title')) ?? '', /Invalid query: Referenced column "nosuch" not found/);
    const tabs = page.getByTestId('result-tab');
    assert.deepEqual(
      (await tabs.allInnerTexts()).map((t) => t.slice(-1)),
      ['✓', '✗', '–'],
    );
    await tabs.nth(2).click();
    assert.match(await status(), /Not run: an earlier statement did not succeed/);
    // A syntax error: marked at its line and column.
    await setSql(page, 'SELECT 1 +\n  FROM exact.exact');
    await page.keyboard.press('Control+Enter');
    await page.getByTestId('error-mark').filter({ hasText: 'FROM' }).waitFor();
    // Editing the marked text takes the mark away.
    await page.keyboard.press('Control+End');
    await page.keyboard.insertText(' x');
    assert.equal(await page.getByTestId('error-mark').count(), 1);
    await page.getByTestId('sql-editor').click();
    await page.keyboard.press('Control+A');
    await page.keyboard.insertText('SELECT 2');
    assert.equal(await page.getByTestId('error-mark').count(), 0);
  });

  it('shows a schema tree that filters as you type, inserts names and previews a table', async () => {
    const tree = page.getByTestId('schema-tree');
    await tree.getByRole('button', { name: 'Tables of exact' }).click();
    await tree.getByRole('button', { name: 'Columns of exact.exact' }).click();
    const money = tree.getByRole('button', { name: /^money DECIMAL\(10,2\)$/ });
    await money.waitFor();
    await setSql(page, 'SELECT  FROM exact.exact');
    await page.keyboard.press('Control+Home');
    for (let i = 0; i < 7; i++) await page.keyboard.press('ArrowRight');
    await money.click();
    assert.equal(await page.getByTestId('sql-editor').innerText(), 'SELECT money FROM exact.exact');
    // The filter searches every schema, table and column the user may read.
    await page.getByTestId('tree-filter').fill('dec');
    const found = await tree.locator('.tree-item').allInnerTexts();
    assert.ok(
      found.some((t) => /^dec\s+DECIMAL\(38,5\)$/.test(t.trim())),
      found.join(' | '),
    );
    assert.ok(!found.some((t) => /^money/.test(t)), found.join(' | '));
    await page.getByTestId('tree-filter').fill('zzz-nothing');
    await tree.getByText('Nothing matches.').waitFor();
    await page.getByTestId('tree-filter').fill('');
    // Preview: a new tab with the table's first rows.
    await tree.getByRole('button', { name: 'Preview rows of exact.exact' }).click();
    await page.getByTestId('row-count').filter({ hasText: '3 rows' }).waitFor();
    assert.equal(await page.getByTestId('sql-editor').innerText(), 'SELECT * FROM exact.exact LIMIT 100');
  });

  it("keeps the history to the user's own statements", async () => {
    // Screens that read the catalog for themselves: sources (health, tables, preview), the tree.
    await page.getByRole('link', { name: 'Sources', exact: true }).click();
    await page.locator('[data-source="exact"]').getByRole('button', { name: 'exact', exact: true }).click();
    await page.getByRole('link', { name: 'History', exact: true }).click();
    const statements = page.getByRole('table', { name: 'Statements' }).locator('tbody pre');
    await statements.first().waitFor();
    const texts = await statements.allInnerTexts();
    assert.ok(texts.includes('SELECT * FROM exact.exact ORDER BY id'), texts.join('\n'));
    // The search runs over the whole log, case aside; % and _ are plain characters.
    await page.getByTestId('history-search').fill('EXACT.SLOW');
    await page.getByTestId('history-search').press('Enter');
    await page.waitForFunction(() =>
      Array.from(document.querySelectorAll('table[aria-label=Statements] tbody pre')).every((p) => /exact\.slow/.test(p.textContent ?? '')),
    );
    assert.ok((await statements.allInnerTexts()).some((t) => t === 'SELECT answer FROM exact.slow'));
    await page.getByTestId('history-search').fill('100%_');
    await page.getByTestId('history-search').press('Enter');
    await page.getByText('No statement matches.').waitFor();
    await page.getByTestId('history-search').fill('');
    await page.getByTestId('history-search').press('Enter');
    const foreign = texts.filter(
      (t) =>
        /vdb console|SYSADMIN\.DataSources|SYS\.Columns|SELECT 1 AS ok FROM/.test(t) &&
        !t.startsWith('SELECT * FROM exact.exact LIMIT 100'),
    );
    assert.deepEqual(foreign, []);
  });

  it('paints the editor in the dark theme: gutter, selection and text', async () => {
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.getByRole('link', { name: 'SQL', exact: true }).click();
    await setSql(page, "SELECT 'dark' AS theme -- a comment");
    await page.keyboard.press('Control+A');
    // CodeMirror draws the selection after its next measure.
    await page.locator('.cm-selectionBackground').first().waitFor();
    const colours = await page.evaluate(() => {
      const rgb = (el: Element | null) => (el ? getComputedStyle(el).backgroundColor : '');
      const line = document.querySelector('[data-testid=sql-editor] .cm-line')!;
      return {
        gutter: rgb(document.querySelector('.cm-gutters')),
        selection: rgb(document.querySelector('.cm-selectionBackground')),
        editor: rgb(document.querySelector('.cm-editor')),
        text: getComputedStyle(line).color,
        keyword: getComputedStyle(Array.from(line.querySelectorAll('span')).find((s) => s.textContent === 'SELECT')!).color,
      };
    });
    /** Relative luminance, 0 (black) to 1 (white), of an rgb()/rgba() colour. */
    const luminance = (css: string) => {
      const [r, g, b] = (css.match(/[\d.]+/g) ?? []).slice(0, 3).map(Number);
      return (0.2126 * r! + 0.7152 * g! + 0.0722 * b!) / 255;
    };
    assert.ok(luminance(colours.gutter) < 0.2, `gutter ${colours.gutter}`);
    assert.ok(luminance(colours.editor) < 0.2, `editor ${colours.editor}`);
    assert.ok(luminance(colours.selection) < 0.4, `selection ${colours.selection}`);
    assert.ok(luminance(colours.text) > 0.7, `text ${colours.text}`);
    assert.ok(luminance(colours.keyword) > 0.5, `keyword ${colours.keyword}`);
    await screenshot(page, 'sql-editor-dark');
    await page.emulateMedia({ colorScheme: 'light' });
  });

  it('offers source changes only to users who may make them', async () => {
    for (const sql of [
      "CALL SYSADMIN.addUser('reader', 'reader-pass-1')",
      "CALL SYSADMIN.addRole('readers')",
      "CALL SYSADMIN.addUserRole('readers', 'reader')",
      "CALL SYSADMIN.setPermissions('readers', 'exact', 'R')",
      "CALL SYSADMIN.addUser('keeper', 'keeper-pass-1')",
      "CALL SYSADMIN.addRole('keepers')",
      "CALL SYSADMIN.addUserRole('keepers', 'keeper')",
      "CALL SYSADMIN.setPermissions('keepers', 'exact', 'RA')",
    ]) {
      const res = await h.server.request('/rest/api/query', { body: { sql } });
      assert.equal(res.status, 200, `${sql}: ${await res.text()}`);
    }
    const asUser = async (name: string, password: string) => {
      const { page: p } = await h.newPage();
      await signIn(p, name, password);
      await p.getByRole('link', { name: 'Sources', exact: true }).click();
      const row = p.locator('[data-source="exact"]');
      await row.waitFor().catch(async (err: unknown) => {
        throw new Error(`${name}: ${String(err)}\n${await p.locator('main').innerText()}`);
      });
      return {
        add: await p.getByTestId('add-source').count(),
        actions: await row.locator('td.actions button').allInnerTexts(),
      };
    };
    assert.deepEqual(await asUser('reader', 'reader-pass-1'), { add: 0, actions: [] });
    // ALTER on the schema: its connection may be edited and it may be removed; refreshing also needs EXECUTE on the procedure.
    assert.deepEqual(await asUser('keeper', 'keeper-pass-1'), { add: 1, actions: ['Edit', 'Remove'] });
    assert.deepEqual(await asUser('admin', ADMIN_PASSWORD), { add: 1, actions: ['Refresh', 'Edit', 'Remove'] });
  });

  it('measures: load to an editor, first rows of 100,000, scrolling (figures in the test output)', async (t) => {
    const { page: p } = await h.newPage();
    await signIn(p);
    // Load: a reload of a signed-in page until the editor takes keys.
    let started = Date.now();
    await p.reload();
    await p.getByTestId('sql-editor').waitFor();
    const loadMs = Date.now() - started;
    await setSql(p, 'SELECT g AS n, g * 2 AS twice, md5(g::varchar) AS h FROM generate_series(1, 100000) t(g)');
    // Twice: the first run of a statement also pays for vdb's first planning of it.
    const times: string[] = [];
    for (let run = 0; run < 2; run++) {
      started = Date.now();
      await p.getByTestId('run').click();
      await p.getByTestId('grid').locator('[data-row="0"] [role=gridcell]').first().waitFor();
      const firstMs = Date.now() - started;
      await p.getByTestId('row-count').filter({ hasText: '100,000 rows' }).waitFor();
      times.push(`first rows ${firstMs} ms, whole cursor ${Date.now() - started} ms`);
      if (run === 0) await p.getByTestId('run').click({ trial: true });
    }
    // Scrolling: 200 steps of a screen each, with the longest frame seen.
    const longest = await p.evaluate(async () => {
      const grid = document.querySelector('[data-testid=grid]')!;
      let worst = 0;
      let last = performance.now();
      for (let i = 0; i < 200; i++) {
        grid.scrollTop += 500 * 26;
        await new Promise(requestAnimationFrame);
        const now = performance.now();
        worst = Math.max(worst, now - last);
        last = now;
      }
      return worst;
    });
    t.diagnostic(
      `console load to editor ${loadMs} ms; 100,000 rows, cold: ${times[0]}; warm: ${times[1]}; longest frame scrolling ${Math.round(longest)} ms`,
    );
  });
});
