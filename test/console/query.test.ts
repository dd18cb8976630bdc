/** The console in a browser: signing in, the SQL editor, paging through a large result, cancel, EXPLAIN, tabs. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { noBrowser, screenshot, setSql, signIn, startConsole, type ConsoleHarness } from './browser.js';

describe('console: sign-in and the SQL editor', { skip: noBrowser }, () => {
  let h: ConsoleHarness;
  let page: Page;
  before(async () => {
    h = await startConsole();
    ({ page } = await h.newPage());
  });
  after(async () => h?.close());

  it('refuses a wrong password with the API title and description, then signs in', async () => {
    await screenshot(page, 'sign-in');
    await page.getByLabel('Username').fill('admin');
    await page.getByLabel('Password').fill('wrong-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    assert.match(await alert.innerText(), /Login failed[\s\S]*The username or password is wrong/);
    await signIn(page);
    assert.equal(await page.getByTestId('user').innerText(), 'admin');
    // The token lives in sessionStorage only.
    const stored = await page.evaluate(() => ({
      session: sessionStorage.getItem('vdb.console.session'),
      local: JSON.stringify(localStorage),
    }));
    assert.match(stored.session ?? '', /"token":"admin:/);
    assert.doesNotMatch(stored.local, /admin:\d+:/);
  });

  it('runs a query with Ctrl+Enter and pages through 100,000 rows', async () => {
    await setSql(
      page,
      'SELECT g AS n, g * 2 AS twice, CASE WHEN g % 2 = 0 THEN NULL ELSE g::varchar END AS odd FROM generate_series(1, 100000) t(g)',
    );
    await page.keyboard.press('Control+Enter');
    await page.getByTestId('row-count').filter({ hasText: '100,000 rows' }).waitFor();
    const grid = page.getByTestId('grid');
    // Types in the headers, NULL shown as NULL.
    const head = await grid.locator('[role=columnheader]').allInnerTexts();
    assert.deepEqual(
      head.map((t) => t.replace(/\s+/g, ' ').trim()),
      ['#', 'n INTEGER', 'twice INTEGER', 'odd VARCHAR'],
    );
    assert.equal(await grid.locator('[data-row="1"] [role=gridcell]').nth(2).innerText(), 'NULL');
    await screenshot(page, 'sql-editor');
    // Keyboard to the last row: the grid loads only the pages it shows.
    await grid.focus();
    await page.keyboard.press('Control+End');
    await grid.locator('[data-row="99999"]').waitFor();
    await page.waitForFunction(() => !document.querySelector('[data-row="99999"] .loading'));
    assert.deepEqual(await grid.locator('[data-row="99999"] [role=gridcell]').allInnerTexts(), ['100000', '200000', 'NULL']);
    // The middle, by scrolling.
    await grid.evaluate((el) => (el.scrollTop = 50_000 * 26));
    await page.waitForFunction(() => {
      const cell = document.querySelector('[data-row="50000"] [role=gridcell]');
      return cell !== null && cell.textContent === '50001';
    });
    // Rendered rows stay few whatever the size of the result.
    assert.ok((await grid.locator('[role=row]').count()) < 100);
    // Copy a cell and a row.
    await grid.locator('[data-row="50000"] [role=gridcell]').nth(1).click();
    await page.getByRole('button', { name: 'Copy cell' }).click();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), '100002');
    await page.getByRole('button', { name: 'Copy row' }).click();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), '50001\t100002\t50001');
  });

  it('downloads the result as CSV and charts it', async () => {
    await setSql(page, "SELECT * FROM (VALUES ('a', 3), ('b, c', 5), (NULL, 1)) v(label, amount)");
    await page.getByTestId('run').click();
    await page.getByTestId('row-count').filter({ hasText: '3 rows' }).waitFor();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('csv').click()]);
    const stream = await download.createReadStream();
    let text = '';
    for await (const chunk of stream) text += String(chunk);
    assert.equal(text, 'label,amount\r\na,3\r\n"b, c",5\r\n,1\r\n');
    await page.getByTestId('chart-toggle').click();
    assert.equal(await page.locator('[data-testid=chart] rect.bar').count(), 3);
    await screenshot(page, 'chart');
  });

  it('shows an API error with title, description and hint', async () => {
    await setSql(page, 'SELECT nosuch FROM SYS.Tables');
    await page.keyboard.press('Control+Enter');
    const alert = page.getByRole('alert');
    await alert.waitFor();
    const text = await alert.innerText();
    assert.match(text, /Invalid query/);
    assert.match(text, /nosuch/);
    assert.match(text, /Hint: SYS.Columns lists the columns/);
  });

  it('cancels a long query, and vdb cancels the statement', async () => {
    await setSql(page, 'SELECT count(*) FROM generate_series(1, 1000000) a, generate_series(1, 1000000) b');
    await page.getByTestId('run').click();
    await page.getByTestId('run-status').filter({ hasText: 'Running' }).waitFor();
    await new Promise((r) => setTimeout(r, 500));
    await page.getByTestId('cancel').click();
    await page.getByTestId('run-status').filter({ hasText: 'Cancelled' }).waitFor();
    // The query log records the cancellation once the server has noticed the closed request.
    let status: unknown;
    for (let i = 0; i < 50 && status !== 'cancelled'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      const res = await h.server.request('/rest/api/query', {
        body: { sql: `SELECT "Status" FROM SYSLOG.QueryLog WHERE "Statement" LIKE '%1000000) b' ORDER BY "ID" DESC LIMIT 1` },
      });
      status = ((await res.json()) as unknown[][])[0]?.[0];
    }
    assert.equal(status, 'cancelled');
  });

  it('explains a statement as a tree with the SQL each step runs', async () => {
    await setSql(
      page,
      "SELECT r.region, count(*) AS orders, round(sum(o.amount), 2) AS revenue FROM shop.orders o JOIN shop.customers c ON c.id = o.customer_id JOIN files.regions r ON r.country_code = c.country WHERE o.status <> 'cancelled' GROUP BY r.region ORDER BY revenue DESC",
    );
    await page.keyboard.press('Escape'); // the completion list
    await page.keyboard.press('Control+Shift+Enter');
    const plan = page.getByTestId('plan');
    await plan.waitFor();
    const text = await plan.innerText();
    assert.match(text, /vdb engine · execute/);
    // The SQL that the SQLite source receives is shown under the engine's step.
    assert.match(text, /shop · source query/);
    assert.ok((await plan.locator('pre.sql').count()) >= 1);
    await screenshot(page, 'explain');
  });

  it('completes table and column names from the catalog', async () => {
    await setSql(page, 'SELECT * FROM SYS.Tab');
    await page.keyboard.press('Control+Space');
    const option = page.locator('.cm-tooltip-autocomplete li', { hasText: 'Tables' });
    await option.first().waitFor();
    await page.keyboard.press('Escape');
  });

  it('keeps several tabs and their statements across a reload', async () => {
    await page.getByTestId('new-tab').click();
    await setSql(page, 'SELECT 42 AS answer');
    await page.waitForFunction(() => Object.values(localStorage).some((value) => value.includes('SELECT 42 AS answer')));
    await page.reload();
    await page.getByTestId('user').waitFor();
    await page.getByTestId('sql-editor').filter({ hasText: 'SELECT 42 AS answer' }).waitFor();
    const tabs = await page.getByRole('tab').allInnerTexts();
    assert.ok(tabs.length >= 2, `tabs: ${tabs.join(', ')}`);
    assert.equal(await page.getByRole('tab', { selected: true }).innerText(), tabs[tabs.length - 1]);
    assert.match(await page.getByTestId('sql-editor').innerText(), /SELECT 42 AS answer/);
    await page.getByRole('tab').first().click();
    // The editor shows the tab's statement once it has rendered the switch.
    await page
      .getByTestId('sql-editor')
      .filter({ hasText: /SELECT \* FROM SYS.Tab/ })
      .waitFor({ timeout: 5000 });
  });

  it('shows the query history and re-runs a statement', async () => {
    await page.getByRole('link', { name: 'History' }).click();
    const row = page.locator('tr', { hasText: 'generate_series(1, 100000)' }).first();
    await row.waitFor();
    await screenshot(page, 'history');
    await row.getByRole('button', { name: 'Re-run' }).click();
    await page.getByTestId('row-count').filter({ hasText: '100,000 rows' }).waitFor();
  });

  it('signs out and forgets the token', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to vdb' }).waitFor();
    assert.equal(await page.evaluate(() => sessionStorage.getItem('vdb.console.session')), null);
  });
});
