/** The console in a browser: signing in, the SQL editor, paging through a large result, cancel, EXPLAIN, tabs. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { clipboardHolds, noBrowser, screenshot, setSql, signIn, startConsole, type ConsoleHarness } from './browser.js';

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
    await clipboardHolds(page, '100002');
    await page.getByRole('button', { name: 'Copy row' }).click();
    await clipboardHolds(page, '50001\t100002\t50001');
    // The same from the keyboard, in the grid: Ctrl+C the cell, Ctrl+Shift+C the row.
    await grid.focus();
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('Control+c');
    await page.getByText('Cell copied').waitFor();
    await clipboardHolds(page, 'NULL');
    await page.keyboard.press('Control+Shift+C');
    await page.getByText('Row copied').waitFor();
    await clipboardHolds(page, '50002\t100004\tNULL');
    // Scrolled through 45 other pages, the selected row's page is forgotten; Copy reads it again.
    for (let p = 0; p < 45; p++) {
      await grid.evaluate((el, top) => (el.scrollTop = top), p * 500 * 26);
      await page.waitForFunction(
        (row) => document.querySelector(`[data-row="${row}"] [role=gridcell]`)?.textContent === String(row + 1),
        p * 500,
      );
    }
    await page.evaluate(() => navigator.clipboard.writeText(''));
    await page.getByRole('button', { name: 'Copy row' }).click();
    await page.getByText('Row copied').waitFor();
    await clipboardHolds(page, '50002\t100004\tNULL');
  });

  it('scrolls by reusing the same row elements, each showing its row, striped by row number', async () => {
    const grid = page.getByTestId('grid');
    await grid.evaluate((el) => (el.scrollTop = 0));
    await page.waitForFunction(() => document.querySelector('[data-row="0"] [role=gridcell]')?.textContent === '1');
    // Mark every row element, then scroll a row at a time and by whole screens, far and back.
    const marked = await grid.evaluate((el) => {
      const rows = [...el.querySelectorAll<HTMLElement>('.grid-row')];
      rows.forEach((r, i) => ((r as HTMLElement & { mark?: number }).mark = i));
      return rows.length;
    });
    const tops = [26, 52, 13 * 26, 500 * 26, 20_001 * 26, 77_777 * 26, 5 * 26];
    for (const top of tops) {
      await grid.evaluate((el, t) => (el.scrollTop = t), top);
      const row = top / 26;
      await page.waitForFunction((r) => document.querySelector(`[data-row="${r}"] [role=gridcell]`)?.textContent === String(r + 1), row);
      const seen = await grid.evaluate((el) =>
        [...el.querySelectorAll<HTMLElement>('.grid-row')].map((r) => ({
          mark: (r as HTMLElement & { mark?: number }).mark,
          row: Number(r.dataset.row),
          alt: r.classList.contains('alt'),
          cells: [...r.children].map((c) => c.textContent),
        })),
      );
      // The same elements, in the same order: none made, none dropped.
      assert.deepEqual(
        seen.map((r) => r.mark),
        Array.from({ length: marked }, (_, i) => i),
        `at row ${row}`,
      );
      for (const r of seen.filter((x) => x.cells[1] !== '…')) {
        const n = r.row + 1;
        assert.deepEqual(r.cells, [String(n), String(n), String(2 * n), n % 2 === 0 ? 'NULL' : String(n)]);
        assert.equal(r.alt, r.row % 2 === 1);
      }
    }
    // Clicks reach the cell under the pointer in recycled rows too.
    await grid.locator('[data-row="7"] [role=gridcell]').nth(2).click();
    await page.getByRole('button', { name: 'Copy cell' }).click();
    await clipboardHolds(page, 'NULL');
  });

  it('downloads the result as CSV and charts it', async () => {
    await setSql(page, "SELECT * FROM (VALUES ('a', 3), ('b, c', 5), (NULL, 1)) v(label, amount)");
    await page.getByTestId('run').click();
    await page.getByTestId('row-count').filter({ hasText: '3 rows' }).waitFor();
    // The row count and the time the statement took.
    assert.match(await page.getByTestId('row-count').innerText(), /^3 rows · \d+(\.\d+)? m?s$/);
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('csv').click()]);
    const stream = await download.createReadStream();
    let text = '';
    for await (const chunk of stream) text += String(chunk);
    assert.equal(text, 'label,amount\r\na,3\r\n"b, c",5\r\n,1\r\n');
    await page.getByTestId('chart-toggle').click();
    assert.equal(await page.locator('[data-testid=chart] rect.bar').count(), 3);
    await screenshot(page, 'chart');
    // A line instead of bars through amounts 3, 5, 1: 5 at the top of the plot (y 8), 0 at its bottom (y 236).
    await page.getByLabel('Line').check();
    const line = page.locator('[data-testid=chart] path.line');
    await line.waitFor();
    assert.equal(await page.locator('[data-testid=chart] rect.bar').count(), 0);
    assert.equal(await line.getAttribute('d'), 'M152.0,99.2 L344.0,8.0 L536.0,190.4');
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
    // Cancel once vdb runs the statement, not before the request has arrived.
    while (h.server.services.lifecycle.inFlight === 0) await new Promise((r) => setTimeout(r, 20));
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
    // A tree: the SQLite source's step is a child of the engine's, with the SQL it receives.
    const engine = plan.locator(':scope > ul > li').first();
    assert.match(await engine.locator('summary').first().innerText(), /vdb engine · execute/);
    const sources = await engine.locator('ul li', { hasText: 'shop · source query' }).locator('pre.sql').allInnerTexts();
    assert.ok(
      sources.some((sql) => /SELECT[\s\S]*orders/i.test(sql)),
      sources.join('\n'),
    );
    // Steps fold and unfold from the keyboard.
    await engine.locator('summary').first().focus();
    await page.keyboard.press('Enter');
    assert.equal(await engine.locator('details').first().getAttribute('open'), null);
    await page.keyboard.press('Enter');
    assert.equal(await engine.locator('details').first().getAttribute('open'), '');
    await screenshot(page, 'explain');
  });

  it('highlights SQL: keywords, names and strings each in their own colour', async () => {
    // A tab of its own for this test and the next: the first tab keeps its statement for later tests.
    await page.getByTestId('new-tab').click();
    await setSql(page, "SELECT name FROM shop.customers WHERE country = 'DE'");
    const colours = await page.evaluate(() => {
      const line = document.querySelector('[data-testid=sql-editor] .cm-line')!;
      const colourOf = (text: string) => {
        const span = Array.from(line.querySelectorAll('span')).find((s) => s.textContent === text);
        return span ? getComputedStyle(span).color : null;
      };
      return { keyword: colourOf('SELECT'), string: colourOf("'DE'"), plain: getComputedStyle(line).color };
    });
    assert.ok(colours.keyword && colours.string, JSON.stringify(colours));
    assert.notEqual(colours.keyword, colours.plain);
    assert.notEqual(colours.string, colours.plain);
    assert.notEqual(colours.keyword, colours.string);
  });

  it('completes schema, table and column names from the catalog, with column types', async () => {
    const options = page.locator('.cm-tooltip-autocomplete li');
    const complete = async (sql: string, label: string) => {
      await setSql(page, sql);
      await page.keyboard.press('Control+Space');
      const option = options.filter({ has: page.locator('.cm-completionLabel', { hasText: new RegExp(`^${label}$`) }) });
      await option.first().waitFor();
      return option.first();
    };
    await complete('SELECT * FROM sho', 'shop');
    await page.keyboard.press('Escape');
    await complete('SELECT * FROM SYS.Tab', 'Tables');
    await page.keyboard.press('Escape');
    const column = await complete('SELECT shop.orders.amo', 'amount');
    assert.match(await column.locator('.cm-completionDetail').innerText(), /DECIMAL|DOUBLE|NUMERIC/);
    // Enter takes the option into the statement. CodeMirror ignores Enter for 75 ms after the list
    // opens (its interactionDelay, so that a fast typist's Enter is a new line): wait beyond that.
    await page.waitForTimeout(200);
    await page.keyboard.press('Enter');
    await page.getByTestId('sql-editor').filter({ hasText: 'SELECT shop.orders.amount' }).waitFor();
    const own = await page.getByRole('tab', { selected: true }).innerText();
    await page.getByRole('button', { name: `Close ${own}` }).click();
    await page.getByRole('tab', { name: own }).waitFor({ state: 'detached' });
  });

  it('keeps several tabs and their statements across a reload', async () => {
    // The first tab's statement, from its tooltip.
    const firstSql = ((await page.getByRole('tab').first().getAttribute('title')) ?? '').slice(0, 40);
    assert.ok(firstSql.length > 10, firstSql);
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
    await page.getByTestId('sql-editor').filter({ hasText: firstSql }).waitFor({ timeout: 5000 });
  });

  it('moves between tabs with the arrow keys', async () => {
    const tabs = page.getByRole('tablist', { name: 'Statements' }).getByRole('tab');
    const count = await tabs.count();
    assert.ok(count >= 2);
    await tabs.first().focus();
    await page.keyboard.press('ArrowRight');
    assert.equal(await tabs.nth(1).getAttribute('aria-selected'), 'true');
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('role')), 'tab');
    await page.keyboard.press('End');
    assert.equal(await tabs.nth(count - 1).getAttribute('aria-selected'), 'true');
    await page.getByTestId('sql-editor').filter({ hasText: 'SELECT 42 AS answer' }).waitFor();
    await page.keyboard.press('Home');
    assert.equal(await tabs.first().getAttribute('aria-selected'), 'true');
    // Only the selected tab is in the Tab order: Tab leaves the list for its close button.
    assert.deepEqual(await tabs.evaluateAll((all) => all.map((t) => (t as HTMLElement).tabIndex)), [0, ...Array(count - 1).fill(-1)]);
  });

  it('shows the query history and re-runs a statement', async () => {
    await page.getByRole('link', { name: 'History' }).click();
    const row = page.locator('tr', { hasText: 'generate_series(1, 100000)' }).first();
    await row.waitFor();
    await screenshot(page, 'history');
    await row.getByRole('button', { name: 'Re-run' }).click();
    await page.getByTestId('row-count').filter({ hasText: '100,000 rows' }).waitFor();
    // Coming back to the SQL screen later neither opens nor runs it again.
    const tabs = await page.getByRole('tab').count();
    await page.getByRole('link', { name: 'Sources' }).click();
    await page.getByRole('heading', { name: 'Sources' }).waitFor();
    await page.getByRole('link', { name: 'SQL' }).click();
    await page.getByTestId('sql-editor').waitFor();
    assert.equal(await page.getByRole('tab').count(), tabs);
    assert.equal(await page.getByTestId('run-status').innerText(), '');
  });

  it('returns to the sign-in screen, saying why, when the token is revoked', async () => {
    const revoked = await h.server.request('/rest/api/query', { body: { sql: "CALL SYSADMIN.revokeTokens('admin')" } });
    assert.equal(revoked.status, 200, await revoked.clone().text());
    await page.getByRole('link', { name: 'History' }).click();
    await page.getByRole('heading', { name: 'Sign in to vdb' }).waitFor();
    await page.getByText('Your sign-in expired or was revoked. Sign in again.').waitFor();
    assert.equal(await page.evaluate(() => sessionStorage.getItem('vdb.console.session')), null);
    await signIn(page);
  });

  it('signs out and forgets the token', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to vdb' }).waitFor();
    assert.equal(await page.evaluate(() => sessionStorage.getItem('vdb.console.session')), null);
  });
});
