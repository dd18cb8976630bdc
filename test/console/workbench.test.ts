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
import { clipboardHolds, noBrowser, setSql, signIn, startConsole, type ConsoleHarness } from './browser.js';

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
    // Numbers are right-aligned as numbers, whatever their size.
    assert.match((await page.getByTestId('grid').locator('[data-row="0"] [role=gridcell]').nth(1).getAttribute('class')) ?? '', /\bnum\b/);
  });
});
