/** The console's other screens in a browser: sources, preferences and API keys, administration and invitations. */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import type pg from 'pg';
import { pgClient, uniqueTag } from '../connectors/db.js';
import { ADMIN_PASSWORD } from '../helpers/server.js';
import { noBrowser, screenshot, signIn, startConsole, type ConsoleHarness } from './browser.js';

describe('console: sources, preferences, administration', { skip: noBrowser }, () => {
  let h: ConsoleHarness;
  let page: Page;
  let postgres: pg.Client;
  const pgSchema = uniqueTag();
  before(async () => {
    postgres = await pgClient();
    await postgres.query(`CREATE SCHEMA ${pgSchema}`);
    await postgres.query(`CREATE TABLE ${pgSchema}.stock (sku text PRIMARY KEY, units integer)`);
    await postgres.query(`INSERT INTO ${pgSchema}.stock VALUES ('A-1', 7), ('B-2', NULL)`);
    h = await startConsole();
    ({ page } = await h.newPage());
    page.on('dialog', (d) => void d.accept());
    await signIn(page);
  });
  after(async () => {
    await h?.close();
    await postgres?.query(`DROP SCHEMA IF EXISTS ${pgSchema} CASCADE`);
    await postgres?.query(`DROP SCHEMA IF EXISTS ${pgSchema}_moved CASCADE`);
    await postgres?.end();
  });

  it('adds a file source after testing the connection, browses and previews it', async () => {
    const folder = path.join(h.server.dataDir, 'files', 'console_cities');
    fs.mkdirSync(folder, { recursive: true });
    fs.writeFileSync(path.join(folder, 'cities.csv'), 'name,country,population\nBerlin,DE,3850809\nParis,FR,2102650\nRome,IT,\n');
    await page.getByRole('link', { name: 'Sources' }).click();
    await page.getByTestId('add-source').click();
    await page.getByLabel('Name', { exact: true }).fill('cities');
    await page.getByLabel('Kind').selectOption('file');
    await page.getByLabel('Folder *').fill(folder);
    await page.getByTestId('test-connection').click();
    await page.getByTestId('test-status').filter({ hasText: 'Connection works: 1 table(s) found.' }).waitFor();
    await page.getByTestId('save-source').click();
    await page.getByText('Source cities added.').waitFor();
    const row = page.locator('tr[data-source="cities"]');
    await row.getByText('reachable').waitFor();
    // The test connection left no source behind.
    assert.equal(await page.locator('tr[data-source^="console_test_"]').count(), 0);
    await row.getByRole('button', { name: 'cities', exact: true }).click();
    await page.getByRole('list', { name: 'Tables' }).getByRole('button', { name: 'cities' }).click();
    const columns = page.locator('table', { has: page.locator('caption', { hasText: 'Columns' }) });
    await columns.waitFor();
    assert.match(await columns.innerText(), /population\s+BIGINT/);
    await page.getByTestId('preview').click();
    const preview = page.locator('table', { has: page.locator('caption', { hasText: 'First 3 rows' }) });
    await preview.waitFor();
    assert.match(await preview.innerText(), /Berlin\s+DE\s+3850809/);
    assert.match(await preview.innerText(), /Rome\s+IT\s+NULL/);
    await screenshot(page, 'sources');
  });

  it('shows the API error of a source that cannot be added', async () => {
    await page.getByLabel('Name', { exact: true }).waitFor({ state: 'detached' });
    await page.getByTestId('add-source').click();
    await page.getByLabel('Name', { exact: true }).fill('nowhere');
    await page.getByLabel('Kind').selectOption('file');
    await page.getByLabel('Folder *').fill(path.join(h.server.dataDir, 'files', 'missing'));
    await page.getByTestId('test-connection').click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    // Said plainly (features.test.ts has the other cases), the folder marked, the source's own words kept.
    assert.match(
      await alert.innerText(),
      /Connection failed\s+".*missing" does not exist on the vdb server\.[\s\S]*The source said: folder not found/,
    );
    assert.equal(await page.getByLabel('Folder *').getAttribute('aria-invalid'), 'true');
    await page.getByTestId('add-source').click();
  });

  it('has a form per connector kind', async () => {
    await page.getByTestId('add-source').click();
    const labels = async (kind: string) => {
      await page.getByLabel('Kind').selectOption(kind);
      const form = page.getByRole('form', { name: 'Add a data source' });
      // A label's first line is its text (a select's options follow).
      const texts = await form.locator('label').allInnerTexts();
      return texts.map((t) => t.split('\n')[0]!.trim()).filter((t) => !['Name', 'Kind', 'Description'].includes(t));
    };
    assert.deepEqual(await labels('postgresql'), ['Host *', 'Port', 'Database', 'User *', 'Password', 'Schema (importer.schemaPattern)']);
    assert.deepEqual(await labels('mysql'), [
      'Host *',
      'Port',
      'Database',
      'User *',
      'Password',
      'Database to import (importer.schemaPattern)',
    ]);
    assert.deepEqual(await labels('sqlite'), ['File path *']);
    assert.deepEqual(await labels('file'), ['Folder *']);
    assert.deepEqual(await labels('duckdb'), ['File path *']);
    // A required field left empty is named before anything is sent.
    await page.getByTestId('test-connection').click();
    assert.match(await page.getByRole('alert').innerText(), /Fill in: File path\./);
    await page.getByTestId('add-source').click();
  });

  it('adds a PostgreSQL source, refreshes it to see a new table, and removes it', async () => {
    await page.getByTestId('add-source').click();
    await page.getByLabel('Name', { exact: true }).fill(pgSchema);
    await page.getByLabel('Kind').selectOption('postgresql');
    await page.getByLabel('Host *').fill('127.0.0.1');
    await page.getByLabel('Port', { exact: true }).fill('5432');
    await page.getByLabel('Database', { exact: true }).fill('test');
    await page.getByLabel('User *').fill('postgres');
    await page.getByLabel('Schema (importer.schemaPattern)').fill(pgSchema);
    await page.getByTestId('test-connection').click();
    await page.getByTestId('test-status').filter({ hasText: 'Connection works: 1 table(s) found.' }).waitFor();
    await page.getByTestId('save-source').click();
    await page.getByText(`Source ${pgSchema} added.`).waitFor();
    const row = page.locator(`tr[data-source="${pgSchema}"]`);
    await row.getByText('reachable').waitFor();
    assert.deepEqual((await row.locator('td').allInnerTexts()).slice(0, 2), ['postgresql', '1']);

    // A table created at the source appears after Refresh.
    await postgres.query(`CREATE TABLE ${pgSchema}.prices (sku text, price numeric(8,2))`);
    await row.getByRole('button', { name: 'Refresh' }).click();
    await page.getByText(`Source ${pgSchema} refreshed.`).waitFor();
    await row.locator('td', { hasText: /^2$/ }).waitFor();
    await row.getByRole('button', { name: pgSchema, exact: true }).click();
    await page.getByRole('list', { name: 'Tables' }).getByRole('button', { name: 'prices' }).click();
    const columns = page.locator('table', { has: page.locator('caption', { hasText: 'Columns' }) });
    await columns.waitFor();
    assert.match(await columns.innerText(), /price\s+DECIMAL\(8,2\)/);

    // A source that fails is listed with the source's error instead of "reachable".
    await postgres.query(`ALTER SCHEMA ${pgSchema} RENAME TO ${pgSchema}_moved`);
    await page.getByRole('button', { name: 'Reload', exact: true }).click();
    const failed = row.locator('td.health.failed');
    await failed.waitFor();
    assert.match(await failed.innerText(), new RegExp(`^✕ .*${pgSchema}`));
    await postgres.query(`ALTER SCHEMA ${pgSchema}_moved RENAME TO ${pgSchema}`);

    await row.getByRole('button', { name: `Remove ${pgSchema}` }).click();
    await page.getByText(`Source ${pgSchema} removed.`).waitFor();
    await row.waitFor({ state: 'detached' });
    assert.equal((await h.server.request(`/rest/api/source/${pgSchema}`)).status, 404);
  });

  it('switches REST on; the copied link works with fetch', async () => {
    await page.getByRole('link', { name: 'Preferences' }).click();
    const rest = page.getByTestId('rest-switch');
    await rest.waitFor();
    assert.equal(await rest.isChecked(), false);
    await rest.check();
    await page.getByText('The hosted link is on').waitFor();
    await page.getByTestId('copy-link').click();
    // Headless Chromium's clipboard may show the write a moment after it resolved.
    await page.waitForFunction(async () => /\/rest$/.test(await navigator.clipboard.readText()), null, { polling: 50, timeout: 5000 });
    const link = await page.evaluate(() => navigator.clipboard.readText());
    assert.match(link, /^http:\/\/127\.0\.0\.1:\d+\/[\w-]+\/rest$/);
    const user = await page.getByTestId('db-username').inputValue();
    const res = await fetch(`${link}/api/query`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Basic ${Buffer.from(`${user}:${ADMIN_PASSWORD}`).toString('base64')}`,
      },
      body: JSON.stringify({ sql: 'SELECT 40 + 2 AS answer' }),
    });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), [[42]]);
  });

  it('creates an API key, shown once, and revokes it', async () => {
    await page.getByTestId('key-name').fill('reporting');
    await page.getByTestId('create-key').click();
    const key = await page.getByLabel('New API key').inputValue();
    assert.match(key, /^vdb_[0-9a-f]{16}_/);
    await screenshot(page, 'preferences');
    const use = () => fetch(`${h.server.url}/rest/api/status/`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal((await use()).status, 200);
    await page.getByRole('button', { name: 'Done' }).click();
    assert.equal(await page.getByLabel('New API key').count(), 0);
    await page.getByRole('button', { name: 'Revoke reporting' }).click();
    await page.getByRole('button', { name: 'Revoke reporting' }).waitFor({ state: 'detached' });
    assert.equal((await use()).status, 401);
  });

  it('invites a user; the invited person accepts and signs in, and sees no administration', async () => {
    await page.getByRole('link', { name: 'Administration' }).click();
    await page.getByTestId('invite-name').fill('erin');
    await page.getByTestId('invite').click();
    const link = await page.getByTestId('invite-link').inputValue();
    assert.match(link, /#\/invite\//);
    await screenshot(page, 'administration');

    const { page: erin } = await h.newPage();
    await erin.goto(link);
    await erin.getByLabel('Password', { exact: true }).fill('erin-pass-1');
    await erin.getByLabel('Repeat password').fill('erin-pass-1');
    await erin.getByRole('button', { name: 'Create my user' }).click();
    await erin.getByText('Welcome, erin').waitFor();
    await erin.getByTestId('to-signin').click();
    assert.equal(await erin.getByLabel('Username').inputValue(), 'erin');
    await signIn(erin, 'erin', 'erin-pass-1');
    await erin.getByRole('link', { name: 'Preferences' }).waitFor();
    assert.equal(await erin.getByRole('link', { name: 'Administration' }).count(), 0);
    await erin.goto(`${h.server.url}/#/admin`);
    await erin.getByTestId('sql-editor').waitFor();
    assert.equal(await erin.getByRole('heading', { name: 'Administration' }).count(), 0);

    // The admin sees erin after a reload of the list, and the audit log has the acceptance.
    await page.getByTestId('reload-users').click();
    await page
      .locator('td', { hasText: /^erin$/ })
      .first()
      .waitFor();
    await page.getByRole('tab', { name: 'Audit log' }).click();
    await page.locator('td', { hasText: 'accept invitation' }).first().waitFor();
  });

  it('sets a permission with a row condition', async () => {
    await page.getByRole('tab', { name: 'Roles' }).click();
    await page.getByLabel('Name').fill('readers');
    await page.getByRole('button', { name: 'Add role' }).click();
    await page.getByText('Role readers added.').waitFor();
    await page.getByRole('tab', { name: 'Permissions' }).click();
    await page.getByLabel('Role').fill('readers');
    await page.getByLabel('Resource').fill('cities.cities');
    await page.getByLabel('Letters').fill('R');
    await page.getByLabel('Row condition').fill("country = 'DE'");
    await page.getByRole('button', { name: 'Set', exact: true }).click();
    await page.getByText('Permissions of readers on cities.cities set.').waitFor();
    const entry = page.locator('tr', { hasText: "country = 'DE'" });
    await entry.waitFor();
    assert.match(await entry.innerText(), /readers\s+cities\.cities\s+R\s+country = 'DE'/);
  });

  it('adds a user, gives them the role, masks a column, and removes the user', async () => {
    await page.getByRole('tab', { name: 'Users' }).click();
    const add = page.getByRole('form', { name: 'Add a user' });
    await add.getByLabel('Name').fill('frank');
    await add.getByLabel('Password').fill('frank-pass-1');
    await add.getByRole('button', { name: 'Add user' }).click();
    await page.getByText('User frank added.').waitFor();
    await page
      .locator('td', { hasText: /^frank$/ })
      .first()
      .waitFor();

    await page.getByRole('tab', { name: 'Roles' }).click();
    const give = page.getByRole('form', { name: 'Give or take a role' });
    await give.getByLabel('Role').selectOption('readers');
    await give.getByLabel('User').fill('frank');
    await give.getByRole('button', { name: 'Give' }).click();
    await page.getByText('frank has readers now.').waitFor();
    await page.locator('tr', { hasText: 'readers' }).filter({ hasText: 'frank' }).first().waitFor();

    await page.getByRole('tab', { name: 'Permissions' }).click();
    await page.getByLabel('Role').fill('readers');
    await page.getByLabel('Resource').fill('cities.cities.population');
    await page.getByLabel('Letters').fill('R');
    await page.getByLabel('Mask (columns)').fill('0');
    await page.getByRole('button', { name: 'Set', exact: true }).click();
    await page.getByText('Permissions of readers on cities.cities.population set.').waitFor();
    const entry = page.locator('tr', { hasText: 'cities.cities.population' });
    await entry.waitFor();
    assert.match(await entry.innerText(), /readers\s+cities\.cities\.population\s+R\s+NULL\s+0\s/);

    // What frank reads: the row condition and the mask set in the console.
    const asFrank = await h.server.request('/rest/api/query', {
      body: { sql: 'SELECT name, population FROM cities.cities ORDER BY name' },
      headers: { authorization: h.server.basic('frank', 'frank-pass-1') },
    });
    assert.equal(asFrank.status, 200, await asFrank.clone().text());
    assert.deepEqual(await asFrank.json(), [['Berlin', 0]]);

    // Taking the role away takes frank's access with it.
    await page.getByRole('tab', { name: 'Roles' }).click();
    await give.getByLabel('Role').selectOption('readers');
    await give.getByLabel('User').fill('frank');
    await give.getByRole('button', { name: 'Take away' }).click();
    await page.getByText('frank no longer has readers.').waitFor();
    const withoutRole = await h.server.request('/rest/api/query', {
      body: { sql: 'SELECT name FROM cities.cities' },
      headers: { authorization: h.server.basic('frank', 'frank-pass-1') },
    });
    assert.equal(withoutRole.status, 403, await withoutRole.clone().text());

    await page.getByRole('tab', { name: 'Users' }).click();
    await page.getByRole('button', { name: 'Remove user frank' }).click();
    await page.getByText('User frank removed.').waitFor();
    await page
      .locator('td', { hasText: /^frank$/ })
      .first()
      .waitFor({ state: 'detached' });
    await page.getByRole('tab', { name: 'Audit log' }).click();
    await page.locator('tr', { hasText: 'SYSADMIN.removeUser' }).first().waitFor();
  });

  it('tells an external-identity user why the console refuses them', async () => {
    await h.server.request('/rest/api/query', { body: { sql: "CALL SYSADMIN.addExternalUser('dan', 'azure-ad')" } });
    const { page: dan } = await h.newPage();
    await dan.getByLabel('Username').fill('dan');
    await dan.getByLabel('Password').fill('whatever-1');
    await dan.getByRole('button', { name: 'Sign in' }).click();
    const alert = dan.getByRole('alert');
    await alert.waitFor();
    assert.match(await alert.innerText(), /Login failed[\s\S]*external identity provider[\s\S]*REST interface does not support/);
  });

  it('fits a narrow window', async () => {
    const { page: narrow } = await h.newPage({ width: 390, height: 800 });
    await signIn(narrow);
    const overflow = await narrow.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 1, `page is ${overflow}px wider than the window`);
    await screenshot(narrow, 'narrow');
  });
});
