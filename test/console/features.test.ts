/**
 * The console's later features (issue 31): procedures in the schema tree, the grid filter, saved
 * queries kept per user across reloads and sessions, EXPLAIN ANALYZE, and the errors of a source
 * that cannot be reached.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type pg from 'pg';
import type { Page } from 'playwright-core';
import { pgClient, uniqueTag } from '../connectors/db.js';
import { clipboardHolds, noBrowser, screenshot, setSql, signIn, startConsole, type ConsoleHarness } from './browser.js';

describe('console: procedures, filter, saved queries, EXPLAIN ANALYZE, source errors', { skip: noBrowser }, () => {
  let h: ConsoleHarness;
  let page: Page;
  let postgres: pg.Client;
  const schema = uniqueTag();
  before(async () => {
    postgres = await pgClient();
    await postgres.query(`CREATE SCHEMA ${schema}`);
    await postgres.query(`CREATE TABLE ${schema}.items (id int, label text, price numeric(20,2))`);
    await postgres.query(
      `INSERT INTO ${schema}.items VALUES (1, 'apple', 0.50), (2, 'Pineapple', 3.10), (3, NULL, 12345678901234.00), (4, 'pear', NULL)`,
    );
    await postgres.query(
      `CREATE FUNCTION ${schema}.twice_of(n integer, bump integer DEFAULT 0) RETURNS TABLE (doubled integer)
         LANGUAGE sql STABLE AS $$ SELECT n * 2 + bump $$`,
    );
    h = await startConsole();
    const added = await h.server.request('/rest/api/source', {
      body: {
        name: 'feat',
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

  const editorText = () => page.getByTestId('sql-editor').innerText();

  it("lists a schema's procedures in the tree, with their arguments and answer columns", async () => {
    const tree = page.getByTestId('schema-tree');
    await tree.getByRole('button', { name: 'Tables of feat' }).click();
    const procedure = tree.getByRole('button', { name: 'twice_of procedure' });
    await procedure.waitFor();
    // Tables first, then procedures; a procedure has no preview (a call needs arguments).
    const names = await tree.locator('.tree-item.table, .tree-item.procedure').allInnerTexts();
    assert.deepEqual(
      names.map((t) => t.replace(/\s+/g, ' ')),
      ['items', 'twice_of procedure'],
    );
    assert.equal(await tree.getByRole('button', { name: 'Preview rows of feat.twice_of' }).count(), 0);
    await tree.getByRole('button', { name: 'Arguments of feat.twice_of' }).click();
    const params = tree.locator('li:has(> .tree-row .procedure) ul .tree-item');
    await params.first().waitFor();
    assert.deepEqual(
      (await params.allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim()),
      ['n INTEGER argument', 'bump INTEGER argument, optional', 'doubled INTEGER column of the answer'],
    );
    // Clicks type the call in: the name, then an argument by name.
    await setSql(page, 'CALL ');
    await procedure.click();
    await page.keyboard.type('(');
    await params.first().click();
    await page.keyboard.type('21)');
    assert.equal(await editorText(), 'CALL feat.twice_of(n => 21)');
    await page.keyboard.press('Control+Enter');
    await page.getByTestId('row-count').filter({ hasText: '1 row' }).waitFor();
    assert.deepEqual(await page.getByTestId('grid').locator('[data-row="0"] [role=gridcell]').allInnerTexts(), ['42']);
  });

  it('filters the rows by a text, keeping exact values and row numbers, over a whole cursor too', async () => {
    const grid = page.getByTestId('grid');
    const filter = page.getByTestId('row-filter');
    const shown = async () =>
      grid.locator('.grid-row').evaluateAll((rows) => rows.map((r) => [...r.children].map((c) => c.textContent).join('|')));
    await setSql(page, 'SELECT * FROM feat.items ORDER BY id');
    await page.keyboard.press('Control+Enter');
    await page.getByTestId('row-count').filter({ hasText: '4 rows' }).waitFor();
    // Case aside, in any column; the DECIMAL keeps its digits (".50", ".00"), NULL matches nothing.
    await filter.fill('APPLE');
    await page.getByTestId('row-count').filter({ hasText: '2 of 4 rows match' }).waitFor();
    assert.deepEqual(await shown(), ['1|1|apple|0.50', '2|2|Pineapple|3.10']);
    await filter.fill('.00');
    await page.getByTestId('row-count').filter({ hasText: '1 of 4 rows match' }).waitFor();
    assert.deepEqual(await shown(), ['3|3|NULL|12345678901234.00']);
    await filter.fill('null');
    await page.getByTestId('row-count').filter({ hasText: '0 of 4 rows match' }).waitFor();
    // Sorted within the filter (down, by code points): row numbers stay those of the result.
    await filter.fill('p');
    await page.getByTestId('row-count').filter({ hasText: '3 of 4 rows match' }).waitFor();
    await grid.getByRole('button', { name: 'label' }).click();
    await grid.getByRole('button', { name: 'label' }).click();
    assert.deepEqual(await shown(), ['4|4|pear|NULL', '1|1|apple|0.50', '2|2|Pineapple|3.10']);
    await filter.fill('');
    await page
      .getByTestId('row-count')
      .filter({ hasText: /^4 rows/ })
      .waitFor();

    // A result of many chunks: read again from its cursor, only the matches kept.
    await setSql(page, "SELECT g AS n, 'item-' || g AS label FROM generate_series(1, 30000) t(g)");
    await page.keyboard.press('Control+Enter');
    await page.getByTestId('row-count').filter({ hasText: '30,000 rows' }).waitFor();
    await filter.fill('ITEM-2999');
    await page.getByTestId('row-count').filter({ hasText: '11 of 30,000 rows match' }).waitFor();
    assert.deepEqual(
      await shown(),
      [2999, 29990, 29991, 29992, 29993, 29994, 29995, 29996, 29997, 29998, 29999].map((n) => `${n}|${n}|item-${n}`),
    );
    // The row number is the row's place in the result, and Copy row copies the row found.
    await grid.locator('[data-row="1"] [role=gridcell]').first().click();
    await page.getByRole('button', { name: 'Copy row' }).click();
    await clipboardHolds(page, '29990\titem-29990');
    await screenshot(page, 'filter');
  });

  it('saves queries by name, per user, kept across reloads and sessions', async () => {
    const script = 'SELECT label FROM feat.items WHERE id = 2;\nSELECT 7 AS seven';
    await setSql(page, script);
    await page.getByTestId('save-query').click();
    await page.getByTestId('saved-query-name').fill('Pineapple check');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText('Saved as “Pineapple check”').waitFor();
    await page.getByRole('tab', { selected: true, name: 'Pineapple check' }).waitFor();
    // Kept by vdb: after a reload, and in a new browser profile signed in afresh.
    await page.reload();
    await page.getByTestId('saved-queries').filter({ hasText: 'Saved queries (1)' }).waitFor();
    const { page: other } = await h.newPage();
    await signIn(other);
    await other.getByTestId('saved-queries').click();
    await other.getByTestId('saved-list').getByRole('button', { name: 'Pineapple check', exact: true }).click();
    await other.getByRole('tab', { selected: true, name: 'Pineapple check' }).waitFor();
    // The editor shows the new tab's text once it has switched to it.
    await other.waitForFunction(
      (text) => document.querySelector('[data-testid=sql-editor]')?.textContent === text.replace('\n', ''),
      script,
    );
    await other.getByTestId('run-script').click();
    await other
      .getByTestId('result-tab')
      .filter({ hasText: /^2: .*✓$/ })
      .waitFor();
    // The first statement's result: its tab clicked again until the grid shows it (the tabs may still re-render).
    const pineapple = other.getByTestId('grid').locator('[data-row="0"] [role=gridcell]').filter({ hasText: 'Pineapple' });
    for (let attempt = 0; attempt < 20 && !(await pineapple.isVisible()); attempt++) {
      await other.getByTestId('result-tab').first().click();
      await other.waitForTimeout(500);
    }
    await pineapple.waitFor();
    // Saving under the same name replaces it.
    await setSql(other, 'SELECT 8');
    await other.getByTestId('save-query').click();
    await other.getByText('Replaces the saved query of that name.').waitFor();
    await other.getByRole('button', { name: 'Save', exact: true }).click();
    await other.getByText('Saved as “Pineapple check”').waitFor();
    await screenshot(other, 'saved-queries');
    // Another user sees none of them.
    await h.server.services.users.addPasswordUser('saver2', 'saver2-pass-1');
    const { page: third } = await h.newPage();
    await signIn(third, 'saver2', 'saver2-pass-1');
    await third.getByTestId('saved-queries').filter({ hasText: 'Saved queries (0)' }).waitFor();
    // Deleted after a confirmation: gone for the user everywhere.
    await page.getByTestId('saved-queries').click();
    page.once('dialog', (d) => void d.accept());
    await page.getByRole('button', { name: 'Delete the saved query Pineapple check' }).click();
    await page.getByTestId('saved-queries').filter({ hasText: 'Saved queries (0)' }).click();
    const left = await h.server.request('/rest/api/preferences/queries');
    assert.deepEqual(await left.json(), []);
  });

  it('shows EXPLAIN ANALYZE: the plan, what the run took and what the source received', async () => {
    const plan = page.getByTestId('plan');
    await setSql(page, 'SELECT label FROM feat.items WHERE price > 1 ORDER BY label');
    await page.getByTestId('explain-analyze').click();
    const analysis = page.getByTestId('analysis');
    await analysis.waitFor();
    const ran = await analysis.getByRole('status').innerText();
    // Durations are "84 ms", or "1.20 s" from a second on (a slow machine).
    assert.match(ran, /^Ran: (\d+ ms|\d+\.\d\d s) in vdb, 2 rows \((\d+ ms|\d+\.\d\d s) with the request\)$/);
    // The statement PostgreSQL received, as sent, under the source's name.
    const sent = analysis.getByRole('list', { name: 'Statements sent to the sources' }).locator('li');
    assert.equal(await sent.count(), 1);
    assert.equal(await sent.locator('strong').innerText(), 'feat');
    assert.match(await sent.locator('pre').innerText(), new RegExp(`FROM ${schema}\\.items AS items\\s+WHERE\\s+price > 1`));
    // The plan it ran with, below.
    assert.match(await plan.locator('summary').first().innerText(), /feat · source statement/);
    await page.keyboard.press('Escape');
    await screenshot(page, 'explain-analyze');
    // Typed in, EXPLAIN ANALYZE (which vdb's SQL refuses) is run the same way; the run shows in the history.
    await setSql(page, 'EXPLAIN (ANALYZE, VERBOSE) SELECT count(*) FROM feat.items');
    await page.keyboard.press('Control+Enter');
    await analysis
      .getByRole('status')
      .filter({ hasText: /in vdb, 1 row / })
      .waitFor();
    const log = await h.server.request('/rest/api/query', {
      body: { sql: `SELECT "Statement", "RowCount" FROM SYSLOG.QueryLog WHERE "Statement" LIKE '/* explain analyze %' ORDER BY "ID"` },
    });
    const entries = (await log.json()) as Array<[string, number]>;
    assert.deepEqual(
      entries.map(([sql, rows]) => [sql.replace(/^\/\* explain analyze \w+ \*\/ /, ''), rows]),
      [
        ['SELECT label FROM feat.items WHERE price > 1 ORDER BY label', 2],
        ['SELECT count(*) FROM feat.items', 1],
      ],
    );
  });

  it('says plainly why a source cannot be connected, adding or editing it, and marks the field', async () => {
    await page.getByRole('link', { name: 'Sources' }).click();
    await page.getByTestId('add-source').click();
    const form = page.getByRole('form', { name: 'Add a data source' });
    const problem = form.getByTestId('source-problem');
    const invalid = () => form.locator('input[aria-invalid=true]').evaluateAll((els) => els.map((e) => (e as HTMLInputElement).name));
    await form.getByLabel('Name', { exact: true }).fill('shop_db');
    await form.getByLabel('Host *').fill('127.0.0.1');
    await form.getByLabel('Port', { exact: true }).fill('1');
    await form.getByLabel('User *').fill('postgres');
    // Nothing listens on port 1: the port is marked, and the throw-away name of the test is never shown.
    await page.getByTestId('test-connection').click();
    await problem.waitFor();
    let text = await problem.innerText();
    assert.match(text, /^Connection failed\s+Nothing accepts connections at 127\.0\.0\.1:1\.\s+Hint: Check the host and port/);
    assert.match(text, /The source said: connect ECONNREFUSED 127\.0\.0\.1:1/);
    assert.doesNotMatch(text, /console_test_/);
    assert.deepEqual(await invalid(), ['port']);
    // A database that does not exist; then a user that does not exist.
    await form.getByLabel('Port', { exact: true }).fill('5432');
    await form.getByLabel('Database', { exact: true }).fill(`${schema}_nodb`);
    await page.getByTestId('test-connection').click();
    await problem.filter({ hasText: `The server has no database named "${schema}_nodb".` }).waitFor();
    assert.deepEqual(await invalid(), ['db']);
    await form.getByLabel('Database', { exact: true }).fill('test');
    await form.getByLabel('User *').fill(`${schema}_nobody`);
    await page.getByTestId('save-source').click();
    await problem.filter({ hasText: `The server has no user named "${schema}_nobody".` }).waitFor();
    assert.deepEqual(await invalid(), ['user-name']);
    await screenshot(page, 'source-error');
    await page.getByTestId('add-source').click();

    // Editing: a connection that fails is refused and said the same way; the source keeps working.
    const row = page.locator('tr[data-source="feat"]');
    await row.getByRole('button', { name: 'Edit feat' }).click();
    const edit = page.getByRole('form', { name: 'Edit the connection of feat' });
    assert.equal(await edit.getByLabel('Host *').inputValue(), '127.0.0.1');
    assert.equal(await edit.getByLabel('User *').inputValue(), 'postgres');
    await edit.getByLabel('Port', { exact: true }).fill('1');
    await edit.getByTestId('save-connection').click();
    await edit.getByTestId('source-problem').filter({ hasText: 'Nothing accepts connections at 127.0.0.1:1.' }).waitFor();
    const still = await h.server.request('/rest/api/query', { body: { sql: 'SELECT count(*) FROM feat.items' } });
    assert.deepEqual(await still.json(), [[4]]);
    await edit.getByLabel('Port', { exact: true }).fill('5432');
    await edit.getByTestId('save-connection').click();
    await page.getByText('Source feat now connects with the new settings.').waitFor();
    const source = await h.server.request('/rest/api/query', {
      body: { sql: `SELECT "Connection" FROM SYSADMIN.DataSources WHERE "Name" = 'feat'` },
    });
    assert.deepEqual(await source.json(), [['host=127.0.0.1,port=5432,db=test,user-name=postgres']]);
  });
});
