/**
 * The console on every screen: it asks nothing of any server but vdb, every control has a name and
 * is reached by the keyboard in reading order, and the page fits a laptop screen and a narrow window.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { noBrowser, screenshot, setSql, signIn, startConsole, type ConsoleHarness } from './browser.js';

const SCREENS = ['SQL', 'Sources', 'Copies', 'History', 'Preferences', 'Administration'] as const;

/** The heading of each screen where it differs from the link's name. */
const HEADINGS: Partial<Record<(typeof SCREENS)[number], string>> = { History: 'Query history', Copies: 'Local copies' };

/** Opens a screen by its link and waits for its heading (the SQL screen has its editor instead). */
async function open(page: Page, screen: (typeof SCREENS)[number]): Promise<void> {
  // In a narrow window the screens are behind the menu button.
  const menu = page.getByRole('button', { name: /Menu$/ });
  if ((await menu.isVisible()) && (await menu.getAttribute('aria-expanded')) !== 'true') await menu.click();
  await page.getByRole('link', { name: screen, exact: true }).click();
  if (screen === 'SQL') await page.getByTestId('sql-editor').waitFor();
  else await page.getByRole('heading', { name: HEADINGS[screen] ?? screen, level: 1 }).waitFor();
}

/** Visible controls without an accessible name (a label, aria-label(ledby), text or title). */
function unnamedControls(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const controls = document.querySelectorAll<HTMLElement>('a[href], button, input, select, textarea, [tabindex], [role=grid]');
    const unnamed: string[] = [];
    for (const el of controls) {
      if (el.getClientRects().length === 0 || el.tabIndex < 0) continue;
      const labelledBy = (el.getAttribute('aria-labelledby') ?? '')
        .split(/\s+/)
        .map((id) => document.getElementById(id)?.textContent ?? '')
        .join('');
      const labels = 'labels' in el ? Array.from((el as HTMLInputElement).labels ?? []).map((l) => l.textContent ?? '') : [];
      const textual =
        el instanceof HTMLInputElement || el instanceof HTMLSelectElement || el instanceof HTMLTextAreaElement ? '' : el.textContent;
      const name = [el.getAttribute('aria-label'), labelledBy, ...labels, textual, el.title].join('').trim();
      if (!name) unnamed.push(el.outerHTML.slice(0, 120));
    }
    return unnamed;
  });
}

/** The accessible name of the focused element, as the tests read it. */
const focused = (page: Page) =>
  page.evaluate(() => {
    const el = document.activeElement as HTMLElement | null;
    return (el?.getAttribute('aria-label') || el?.textContent || '').trim();
  });

describe('console: network, keyboard, layout', { skip: noBrowser }, () => {
  let h: ConsoleHarness;
  let page: Page;
  const requests: string[] = [];
  before(async () => {
    h = await startConsole();
    const context = await h.browser.newContext({ viewport: { width: 1366, height: 768 } });
    page = await context.newPage();
    page.setDefaultTimeout(20_000);
    page.on('request', (r) => requests.push(r.url()));
    page.on('dialog', (d) => void d.accept());
    await page.goto(`${h.server.url}/`);
    await signIn(page);
  });
  after(async () => h?.close());

  it('fetches nothing from anywhere but vdb, fonts included', async () => {
    await setSql(page, "SELECT * FROM (VALUES ('a', 3), ('b', 5)) v(label, amount)");
    await page.getByTestId('run').click();
    await page.getByTestId('row-count').filter({ hasText: '2 rows' }).waitFor();
    await page.getByTestId('chart-toggle').click();
    for (const screen of SCREENS) await open(page, screen);
    await page.getByRole('tab', { name: 'Audit log' }).click();
    await page.getByRole('table').first().waitFor();
    const elsewhere = requests.filter((url) => !url.startsWith(`${h.server.url}/`) && !/^(data|blob):/.test(url));
    assert.deepEqual(elsewhere, []);
    assert.ok(requests.length > 10, `${requests.length} requests seen`);
    // The fonts are bundled: loaded, and from vdb (the check above covers every request).
    await page.evaluate(() => document.fonts.ready);
    const loaded = await page.evaluate(() =>
      [...document.fonts].filter((f) => f.status === 'loaded').map((f) => f.family.replace(/["']/g, '')),
    );
    assert.ok(loaded.includes('Inter'), `Inter loaded: ${loaded.join(', ')}`);
    assert.ok(loaded.includes('JetBrains Mono'), `JetBrains Mono loaded: ${loaded.join(', ')}`);
    assert.ok(
      requests.some((url) => url.startsWith(`${h.server.url}/`) && url.endsWith('.woff2')),
      'font files came from vdb',
    );
  });

  it('names every control on every screen', async () => {
    for (const screen of SCREENS) {
      await open(page, screen);
      if (screen === 'Sources') {
        await page.getByTestId('add-source').click();
        await page.getByLabel('Kind').waitFor();
      }
      if (screen === 'Administration') {
        for (const pane of ['Users', 'Roles', 'Permissions', 'Audit log']) {
          await page.getByRole('tab', { name: pane }).click();
          await page.getByRole('tabpanel').getByRole('button').first().waitFor();
          assert.deepEqual(await unnamedControls(page), [], `${screen}, ${pane}`);
        }
      }
      assert.deepEqual(await unnamedControls(page), [], screen);
      if (screen === 'Sources') await page.getByTestId('add-source').click();
    }
  });

  it('moves the focus in reading order; Esc then Tab leaves the editor', async () => {
    await open(page, 'SQL');
    await page.getByRole('tablist', { name: 'Statements' }).getByRole('tab').first().click();
    // From the top of a freshly loaded page.
    await page.reload();
    await page.getByTestId('sql-editor').waitFor();
    const order: string[] = [];
    const outlines: string[] = [];
    for (let i = 0; i < 12; i++) {
      await page.keyboard.press('Tab');
      order.push(await focused(page));
      outlines.push(await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle));
    }
    assert.deepEqual(order.slice(0, 8), [
      'Skip to content',
      'SQL',
      'Sources',
      'Copies',
      'History',
      'Preferences',
      'Administration',
      'Sign out',
    ]);
    assert.match(order[8]!, /^Query 1/);
    assert.deepEqual(order.slice(9), ['Close Query 1', 'New tab', 'SQL statement']);
    // A focus ring shows on each control reached by the keyboard (the editor marks its own focus).
    assert.deepEqual(
      outlines.slice(0, 11).filter((o) => o === 'none'),
      [],
    );
    // In the editor Tab indents; Esc first lets Tab move on to Run.
    await page.getByTestId('sql-editor').click();
    await page.keyboard.press('Escape');
    await page.keyboard.press('Tab');
    assert.equal(await focused(page), 'Run');
    // "Skip to content" moves the focus to the screen itself, and stays on that screen.
    await open(page, 'Sources');
    await page.reload();
    await page.getByRole('heading', { name: 'Sources', level: 1 }).waitFor();
    await page.keyboard.press('Tab');
    assert.equal(await focused(page), 'Skip to content');
    await page.keyboard.press('Enter');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'main');
    assert.equal(await page.evaluate(() => location.hash), '#/sources');
    await page.getByRole('heading', { name: 'Sources', level: 1 }).waitFor();
  });

  for (const [label, viewport] of [
    ['a laptop screen', { width: 1366, height: 768 }],
    ['a narrow window', { width: 390, height: 800 }],
  ] as const) {
    it(`fits ${label} on every screen`, async () => {
      await page.setViewportSize(viewport);
      for (const screen of SCREENS) {
        await open(page, screen);
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        assert.ok(overflow <= 1, `${screen}: the page is ${overflow}px wider than the window`);
        // The screen's first control is inside the window, not pushed off to the side.
        const box = await page.locator('main').getByRole('button').first().boundingBox();
        assert.ok(box && box.x >= 0 && box.x + box.width <= viewport.width, `${screen}: ${JSON.stringify(box)}`);
      }
    });
  }

  it('shows the history as cards on a phone, each statement the whole width', async () => {
    // A long statement and a failed one, as any user's history has.
    const long = `SELECT ${Array.from({ length: 30 }, (_, i) => `${i} AS column_number_${i}`).join(', ')}`;
    for (const sql of [long, 'SELECT * FROM no_such_schema.no_such_table']) {
      await h.server.request('/rest/api/query', { body: { sql } });
    }
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.setViewportSize({ width: 390, height: 844 });
      await open(page, 'History');
      await page.getByRole('button', { name: 'Reload' }).click();
      const cards = page.getByRole('table', { name: 'Statements' }).locator('tbody tr');
      await cards.filter({ hasText: 'column_number_29' }).first().waitFor();
      const layout = await page.evaluate(() => {
        const table = document.querySelector<HTMLElement>('table[aria-label=Statements]')!;
        const wrap = table.parentElement!;
        const rows = [...table.querySelectorAll<HTMLElement>('tbody tr')];
        const statement = rows.map((r) => r.querySelector<HTMLElement>('td.statement')!.getBoundingClientRect());
        const first = rows[0]!;
        return {
          pageOverflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
          tableOverflow: wrap.scrollWidth - wrap.clientWidth,
          header: getComputedStyle(table.querySelector('thead')!).display,
          narrowestStatement: Math.min(...statement.map((r) => r.width)),
          // The statement leads its card; the other cells follow, one a line, named.
          statementFirst: rows.every(
            (r) => r.querySelector('td.statement')!.getBoundingClientRect().top <= r.querySelector('td')!.getBoundingClientRect().top,
          ),
          labels: [...first.querySelectorAll('td[data-label]')].map((td) => getComputedStyle(td, '::before').content),
          font: parseFloat(getComputedStyle(first.querySelector('pre')!).fontSize),
          button: first.querySelector('td.actions button')!.getBoundingClientRect().right,
        };
      });
      assert.equal(layout.header, 'none');
      assert.equal(layout.pageOverflow, 0, 'the page does not scroll sideways');
      assert.equal(layout.tableOverflow, 0, 'the history does not scroll sideways');
      assert.ok(layout.narrowestStatement > 320, `statements ${layout.narrowestStatement}px wide`);
      assert.ok(layout.statementFirst);
      assert.deepEqual(layout.labels, ['"Started"', '"User"', '"Status"', '"Rows"', '"Time"']);
      assert.ok(layout.font >= 12, `statement text ${layout.font}px`);
      assert.ok(layout.button <= 390, `Re-run ends at ${layout.button}px`);
      // The failed statement's error shows in its card.
      await cards.filter({ hasText: 'no_such_table' }).locator('.error-text').first().waitFor();
      await screenshot(page, scheme === 'light' ? 'history-phone' : 'history-phone-dark');
    }
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 1366, height: 768 });
  });

  it('folds the screens into a menu on a phone', async () => {
    await page.setViewportSize({ width: 390, height: 800 });
    const menu = page.getByRole('button', { name: /Menu$/ });
    const history = page.getByRole('link', { name: 'History', exact: true });
    assert.equal(await history.isVisible(), false);
    await menu.click();
    assert.equal(await menu.getAttribute('aria-expanded'), 'true');
    // One link a line, the full width of the window.
    const boxes = await page
      .getByRole('navigation', { name: 'Screens' })
      .getByRole('link')
      .evaluateAll((links) => links.map((l) => l.getBoundingClientRect()).map((r) => ({ x: Math.round(r.x), width: Math.round(r.width) })));
    assert.ok(boxes.length >= 4 && boxes.every((b) => b.x === boxes[0]!.x && b.width > 300), JSON.stringify(boxes));
    await history.click();
    await page.getByRole('heading', { name: 'Query history', level: 1 }).waitFor();
    assert.equal(await history.isVisible(), false, 'the menu closes once a screen is chosen');
    await page.setViewportSize({ width: 1366, height: 768 });
    assert.equal(await menu.isVisible(), false);
    assert.equal(await history.isVisible(), true);
  });
});
