/**
 * The console's local copies screen in a browser, over a real PostgreSQL table: accelerated from
 * the form, refreshed by a click (rows, version and refresh time change), its refresh history,
 * pause and resume, a failing refresh that keeps the last good copy, buttons by permission, the
 * screen at desktop and phone sizes in both themes, and dropping the copy.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import type pg from 'pg';
import { pgClient, uniqueTag } from '../connectors/db.js';
import { ADMIN_PASSWORD } from '../helpers/server.js';
import { noBrowser, screenshot, signIn, startConsole, type ConsoleHarness } from './browser.js';

/** The copy's row of SYS.Copies as vdb reports it (not as the console shows it). */
async function copyOf(h: ConsoleHarness, name: string): Promise<Record<string, unknown> | undefined> {
  const res = await h.server.request('/rest/api/query?headers=true', {
    body: { sql: `SELECT "State", "RowCount", "Version", "LastError" FROM SYS.Copies WHERE "Name" = '${name}'` },
  });
  assert.equal(res.status, 200, await res.clone().text());
  const [columns, row] = (await res.json()) as [string[], unknown[] | undefined];
  return row && Object.fromEntries(columns.map((c, i) => [c, row[i]]));
}

async function openCopies(page: Page): Promise<void> {
  const menu = page.getByRole('button', { name: /Menu$/ });
  if (await menu.isVisible()) await menu.click();
  await page.getByRole('link', { name: 'Copies', exact: true }).click();
  await page.getByRole('heading', { name: 'Local copies', level: 1 }).waitFor();
}

const textOf = async (row: Locator, testId: string) => (await row.getByTestId(testId).innerText()).trim();

describe('console: local copies', { skip: noBrowser }, () => {
  let h: ConsoleHarness;
  let page: Page;
  let postgres: pg.Client;
  const schema = uniqueTag();
  const copy = `${schema}.orders`;
  before(async () => {
    postgres = await pgClient();
    await postgres.query(`CREATE SCHEMA ${schema}`);
    await postgres.query(`CREATE TABLE ${schema}.orders (id integer PRIMARY KEY, amount numeric(10,2))`);
    await postgres.query(`INSERT INTO ${schema}.orders VALUES (1, 10.50), (2, 20.00), (3, 7.25)`);
    h = await startConsole();
    const added = await h.server.request('/rest/api/source', {
      body: {
        name: schema,
        template: 'postgresql',
        connectionProps: 'host=127.0.0.1,port=5432,db=test,user-name=postgres',
        modelProps: `importer.schemaPattern=${schema}`,
      },
    });
    assert.equal(added.status, 201, await added.clone().text());
    ({ page } = await h.newPage());
    page.on('dialog', (d) => void d.accept());
    await signIn(page);
  });
  after(async () => {
    await h?.close();
    await postgres?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await postgres?.query(`DROP SCHEMA IF EXISTS ${schema}_moved CASCADE`);
    await postgres?.end();
  });

  it('accelerates a PostgreSQL table from the form; the copy is built and shown ready', async () => {
    await openCopies(page);
    await page.getByText('No local copies of tables you may read.').waitFor();
    await page.getByRole('button', { name: 'Accelerate a table' }).click();
    await page.getByTestId('copy-table').fill(copy);
    await page.getByLabel('Max staleness').fill('1 hour');
    await page.getByTestId('accelerate').click();
    await page.getByText(`Copy of ${copy} defined; its first refresh is under way.`).waitFor();
    const row = page.locator(`tr[data-copy="${copy}"]`);
    // The screen reads the list again while the copy is building.
    await row.locator('td.copy-state', { hasText: /^ready$/ }).waitFor();
    assert.equal(await textOf(row, 'copy-rows'), '3');
    assert.match(await row.innerText(), /full · when asked/);
    assert.match(await textOf(row, 'copy-age'), /^\d+ s old$/);
    assert.match(await row.innerText(), /read while at most 1 h old/);
    assert.deepEqual(await row.locator('td.actions button').allInnerTexts(), ['Refresh', 'Pause', 'Drop']);
    assert.equal((await copyOf(h, copy))?.RowCount, 3);
  });

  it('refreshes the copy by a click: rows, version and refresh time change; the history lists the refreshes', async () => {
    const row = page.locator(`tr[data-copy="${copy}"]`);
    const before = await textOf(row, 'copy-refreshed');
    const version = Number(/version (\d+)/.exec(before)?.[1]);
    assert.ok(version >= 1, before);
    await postgres.query(`INSERT INTO ${schema}.orders VALUES (4, 1.00), (5, 2.00)`);
    // A new refresh time, also when the copy was built within this second.
    await new Promise((r) => setTimeout(r, 1100));
    await row.getByRole('button', { name: `Refresh ${copy}` }).click();
    await page.getByText(`Copy ${copy} refreshed: 5 rows.`).waitFor();
    await row.getByTestId('copy-rows').filter({ hasText: /^5$/ }).waitFor();
    const after = await textOf(row, 'copy-refreshed');
    assert.match(after, new RegExp(`version ${version + 1}`));
    const time = (text: string) => /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d/.exec(text)?.[0] ?? '';
    assert.ok(time(after) > time(before), `${time(before)} -> ${time(after)}`);
    assert.match(after, /took \d+ ms|took [\d.]+ s/);
    assert.deepEqual(await copyOf(h, copy), { State: 'ready', RowCount: 5, Version: version + 1, LastError: null });

    await row.getByRole('button', { name: copy, exact: true }).click();
    const history = page.getByRole('table', { name: `Refreshes of ${copy}` });
    await history.locator('tbody tr').nth(1).waitFor();
    const entries = await history.locator('tbody tr').allInnerTexts();
    assert.ok(entries.length >= 2, entries.join('\n'));
    // Newest first: the refresh of the click read 5 rows, the first one 3.
    assert.match(entries[0]!, /full\s+ok\s+5\s/);
    assert.match(entries[entries.length - 1]!, /full\s+ok\s+3\s/);
  });

  it('pauses and resumes the schedule', async () => {
    const row = page.locator(`tr[data-copy="${copy}"]`);
    await row.getByRole('button', { name: `Pause ${copy}` }).click();
    await page.getByText(`Copy ${copy} paused.`).waitFor();
    await row.locator('td.copy-state', { hasText: /^paused$/ }).waitFor();
    assert.deepEqual(await row.locator('td.actions button').allInnerTexts(), ['Refresh', 'Resume', 'Drop']);
    assert.equal((await copyOf(h, copy))?.State, 'paused');
    await row.getByRole('button', { name: `Resume ${copy}` }).click();
    await page.getByText(`Copy ${copy} resumed.`).waitFor();
    await row.locator('td.copy-state', { hasText: /^ready$/ }).waitFor();
  });

  it('shows a failed refresh and its error; the last good copy stays', async () => {
    const row = page.locator(`tr[data-copy="${copy}"]`);
    await postgres.query(`ALTER SCHEMA ${schema} RENAME TO ${schema}_moved`);
    try {
      await row.getByRole('button', { name: `Refresh ${copy}` }).click();
      // The call itself fails with the source's error, shown as the API wrote it.
      await page.getByRole('alert').waitFor();
      await row.locator('td.copy-state', { hasText: /^failing \(last good copy kept\)/ }).waitFor();
      assert.match(await textOf(row, 'copy-error'), new RegExp(schema));
      assert.equal(await textOf(row, 'copy-rows'), '5');
      const history = page.getByRole('table', { name: `Refreshes of ${copy}` });
      await history.locator('tbody tr').first().locator('td.status.failed').waitFor();
      await screenshot(page, 'copies-failed');
    } finally {
      await postgres.query(`ALTER SCHEMA ${schema}_moved RENAME TO ${schema}`);
    }
    await row.getByRole('button', { name: `Refresh ${copy}` }).click();
    await page.getByText(`Copy ${copy} refreshed: 5 rows.`).waitFor();
    await row.locator('td.copy-state', { hasText: /^ready$/ }).waitFor();
    assert.equal(await row.getByTestId('copy-error').count(), 0);
  });

  it('offers the buttons only to users who may use them', async () => {
    for (const sql of [
      "CALL SYSADMIN.addUser('copyreader', 'reader-pass-1')",
      "CALL SYSADMIN.addRole('copyreaders')",
      "CALL SYSADMIN.addUserRole('copyreaders', 'copyreader')",
      `CALL SYSADMIN.setPermissions('copyreaders', '${schema}', 'R')`,
      "CALL SYSADMIN.addUser('copykeeper', 'keeper-pass-1')",
      "CALL SYSADMIN.addRole('copykeepers')",
      "CALL SYSADMIN.addUserRole('copykeepers', 'copykeeper')",
      `CALL SYSADMIN.setPermissions('copykeepers', '${schema}', 'RA')`,
      // EXECUTE on the SYSADMIN schema covers its procedures.
      "CALL SYSADMIN.setPermissions('copykeepers', 'SYSADMIN', 'E')",
    ]) {
      const res = await h.server.request('/rest/api/query', { body: { sql } });
      assert.equal(res.status, 200, `${sql}: ${await res.text()}`);
    }
    const asUser = async (name: string, password: string) => {
      const { page: p } = await h.newPage();
      await signIn(p, name, password);
      await openCopies(p);
      const row = p.locator(`tr[data-copy="${copy}"]`);
      await row.locator('td.copy-state', { hasText: /^ready$/ }).waitFor();
      const actions = await row.locator('td.actions button').allInnerTexts();
      const accelerate = await p.getByRole('button', { name: 'Accelerate a table' }).count();
      if (name === 'copykeeper') {
        // What the console offers, vdb allows.
        await row.getByRole('button', { name: `Refresh ${copy}` }).click();
        await p.getByText(`Copy ${copy} refreshed: 5 rows.`).waitFor();
      }
      await p.context().close();
      return { accelerate, actions };
    };
    assert.deepEqual(await asUser('copyreader', 'reader-pass-1'), { accelerate: 0, actions: [] });
    assert.deepEqual(await asUser('copykeeper', 'keeper-pass-1'), { accelerate: 1, actions: ['Refresh', 'Pause', 'Drop'] });
    assert.deepEqual(await asUser('admin', ADMIN_PASSWORD), { accelerate: 1, actions: ['Refresh', 'Pause', 'Drop'] });
  });

  it('fits a desktop and a phone in both themes (screenshots)', async () => {
    for (const [name, viewport] of [
      ['copies', { width: 1366, height: 768 }],
      ['copies-phone', { width: 390, height: 844 }],
    ] as const) {
      for (const scheme of ['light', 'dark'] as const) {
        const { page: p } = await h.newPage(viewport);
        await p.emulateMedia({ colorScheme: scheme });
        await signIn(p);
        await openCopies(p);
        const row = p.locator(`tr[data-copy="${copy}"]`);
        await row.locator('td.copy-state', { hasText: /^ready$/ }).waitFor();
        await row.getByRole('button', { name: copy, exact: true }).click();
        await p
          .getByRole('table', { name: `Refreshes of ${copy}` })
          .locator('tbody tr')
          .first()
          .waitFor();
        const overflow = await p.evaluate(() => {
          const wrap = document.querySelector('.copies-list')!.parentElement!;
          return {
            page: document.documentElement.scrollWidth - document.documentElement.clientWidth,
            table: wrap.scrollWidth - wrap.clientWidth,
          };
        });
        assert.deepEqual(overflow, { page: 0, table: 0 }, `${name} ${scheme}: nothing scrolls sideways`);
        const refresh = await row.getByRole('button', { name: `Refresh ${copy}` }).boundingBox();
        assert.ok(refresh && refresh.x >= 0 && refresh.x + refresh.width <= viewport.width, JSON.stringify(refresh));
        await screenshot(p, scheme === 'light' ? name : `${name}-dark`);
        await p.context().close();
      }
    }
  });

  it('drops the copy after a confirmation; statements read the source again', async () => {
    const row = page.locator(`tr[data-copy="${copy}"]`);
    await row.getByRole('button', { name: `Drop ${copy}` }).click();
    await page.getByText(`Copy ${copy} dropped.`).waitFor();
    await row.waitFor({ state: 'detached' });
    assert.equal(await copyOf(h, copy), undefined);
    await page.getByText('No local copies of tables you may read.').waitFor();
  });
});
