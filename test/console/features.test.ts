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
import { noBrowser, screenshot, setSql, signIn, startConsole, type ConsoleHarness } from './browser.js';

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
});
