/**
 * Harness of the console's end-to-end tests: a real vdb (test/helpers/server.ts) and Debian's
 * Chromium driven by playwright-core, with the flags this machine's closed network needs.
 * Screenshots for docs/console.md are written when VDB_SCREENSHOTS=1.
 */
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { ADMIN_PASSWORD, startTestServer, type TestServer } from '../helpers/server.js';

export const CHROMIUM = process.env.VDB_CHROMIUM ?? '/usr/bin/chromium';

/** Skip reason when no browser is installed; in CI the tests must run (.ci/run installs it). */
export const noBrowser: string | false =
  !fs.existsSync(CHROMIUM) && !process.env.CI ? `no Chromium at ${CHROMIUM} (apt-get install chromium chromium-driver)` : false;

const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface ConsoleHarness {
  server: TestServer;
  browser: Browser;
  /** A fresh browser profile (cookies, storage) on the console, clipboard allowed. */
  newPage(viewport?: { width: number; height: number }): Promise<{ context: BrowserContext; page: Page }>;
  close(): Promise<void>;
}

export async function startConsole(): Promise<ConsoleHarness> {
  const server = await startTestServer();
  let browser: Browser;
  try {
    // Playwright gives every launch a new, empty user-data-dir of its own.
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
  } catch (err) {
    await server.close();
    throw err;
  }
  const contexts: BrowserContext[] = [];
  return {
    server,
    browser,
    async newPage(viewport = { width: 1280, height: 800 }) {
      const context = await browser.newContext({ viewport, acceptDownloads: true, colorScheme: 'light' });
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
      contexts.push(context);
      const page = await context.newPage();
      // A script error in the console fails nothing by itself: make it visible in the test output.
      page.on('crash', () => process.stderr.write('console page crashed\n'));
      page.on('pageerror', (err) => process.stderr.write(`console page error: ${err.stack ?? err.message}\n`));
      page.setDefaultTimeout(20_000);
      await page.goto(`${server.url}/`);
      return { context, page };
    },
    async close() {
      for (const c of contexts) await c.close().catch(() => undefined);
      await browser.close();
      await server.close();
    },
  };
}

export async function signIn(page: Page, username = 'admin', password = ADMIN_PASSWORD): Promise<void> {
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('user').waitFor();
}

/** Replaces the editor's text (CodeMirror: select all, then type). */
export async function setSql(page: Page, sql: string): Promise<void> {
  const editor = page.getByTestId('sql-editor');
  await editor.click();
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(sql);
}

export async function screenshot(page: Page, name: string): Promise<void> {
  if (process.env.VDB_SCREENSHOTS !== '1') return;
  const dir = path.resolve('docs', 'console');
  fs.mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: path.join(dir, `${name}.png`) });
}

/**
 * Waits until the clipboard holds `text`, and fails saying what it held instead. Headless
 * Chromium's clipboard may show a write a moment after the page's writeText resolved.
 */
export async function clipboardHolds(page: Page, text: string, timeout = 5000): Promise<void> {
  try {
    await page.waitForFunction(async (want) => (await navigator.clipboard.readText()) === want, text, { timeout, polling: 50 });
  } catch {
    const held = await page.evaluate(() => navigator.clipboard.readText());
    throw new Error(`the clipboard holds ${JSON.stringify(held)}, not ${JSON.stringify(text)}`);
  }
}
