/**
 * The admin console in headless Chromium: a signed-in browser context, page errors watched, and
 * screenshots under `test-output/browser/console/` (and `docs/images/console/` with
 * `CONSOLE_SCREENSHOTS=1`, how the pictures of docs/console.md are made).
 *
 * @module
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync } from 'node:fs';
import { after, before } from 'node:test';
import { join } from 'node:path';
import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { ADMIN, startServer, type TestServer } from './server.js';
import { DESKTOP, REPO_ROOT, launchChromium, screenshot, waitForText, watchContext, type ContextWatch } from './browser.js';

export const CONSOLE = '/_utils/';
export const WIDE: BrowserContextOptions = { ...DESKTOP, viewport: { width: 1100, height: 760 } };
const DOCS_DIR = join(REPO_ROOT, 'docs', 'images', 'console');

export interface ConsoleBrowser {
  context: BrowserContext;
  page: Page;
  watch: ContextWatch;
  /** Uncaught errors of the page's scripts. */
  errors: string[];
  /** Fails on a request off the origin, a CSP violation or a script error. */
  assertClean(): void;
}

export async function openContext(browser: Browser, server: TestServer, options: BrowserContextOptions = WIDE): Promise<ConsoleBrowser> {
  const context = await browser.newContext(options);
  const watch = await watchContext(context);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(String(error)));
  return {
    context,
    page,
    watch,
    errors,
    assertClean() {
      watch.assertClean(server.url);
      assert.deepEqual(errors, [], 'no script error in the page');
    },
  };
}

/** Runs `work` in a fresh browser context, checks that it stayed clean, and closes it. */
export async function inContext(browser: Browser, server: TestServer, options: BrowserContextOptions, work: (tab: ConsoleBrowser) => Promise<void>): Promise<void> {
  const tab = await openContext(browser, server, options);
  try {
    await work(tab);
    tab.assertClean();
  } finally {
    await tab.context.close();
  }
}

/** Opens the console, is sent to the login page, signs in, and is back in the console. */
export async function signIn(page: Page, server: TestServer, name = ADMIN[0], password = ADMIN[1], hash = ''): Promise<void> {
  await page.goto(`${server.url}${CONSOLE}${hash}`);
  await page.waitForURL(/\/_utils\/session\.html\?/);
  await page.waitForLoadState('networkidle');
  await page.fill('#name', name);
  await page.fill('#password', password);
  await Promise.all([page.waitForURL(`${server.url}${CONSOLE}${hash}`), page.click('#login-button')]);
  assert.equal(await waitForText(page, '#who-name'), name);
  await settled(page);
}

/** Goes to a console page by its hash and waits for its heading. */
export async function visit(page: Page, hash: string, heading: string | RegExp): Promise<void> {
  // The same hash again shows the page afresh, as a click on its link would not.
  const target = JSON.stringify(hash);
  await page.evaluate(`document.getElementById('view-content')?.setAttribute('data-old', '');
    location.hash === ${target} ? window.dispatchEvent(new HashChangeEvent('hashchange')) : (location.hash = ${target});`);
  await page.locator('#view[aria-busy="false"] #view-content:not([data-old]) #view-title').filter({ hasText: heading }).waitFor();
}

/** The status message after an action, waited for. */
export async function statusAfter(page: Page, action: () => Promise<unknown>, expected: RegExp): Promise<string> {
  await action();
  await page.locator('#status').filter({ hasText: expected }).waitFor();
  await settled(page);
  return waitForText(page, '#status');
}

/** Waits until the page shown has loaded what it shows. */
export async function settled(page: Page): Promise<void> {
  await page.locator('#view[aria-busy="false"]').waitFor({ state: 'attached' });
}

/** Saves a screenshot; with CONSOLE_SCREENSHOTS=1 also as docs/images/console/<name>.png. */
export async function consoleShot(page: Page, name: string, fullPage = false): Promise<void> {
  const path = await screenshot(page, `console-${name}`, { fullPage });
  if (process.env['CONSOLE_SCREENSHOTS'] === '1') {
    mkdirSync(DOCS_DIR, { recursive: true });
    copyFileSync(path, join(DOCS_DIR, `${name}.png`));
  }
}

export const CONSOLE_INI = '[chttpd_auth]\niterations = 1000\n';

export interface ConsoleSuite {
  server: TestServer;
  browser: Browser;
  /** One browser context for the whole suite, signed out at first. */
  tab: ConsoleBrowser;
}

/**
 * Registers the suite's hooks: a server, Chromium and one tab before its tests (before the
 * suite's own `before`, which may seed data), all closed after them. Read the fields in hooks
 * and tests, not when the suite is declared.
 */
export function useConsoleSuite(ini = CONSOLE_INI): ConsoleSuite {
  const suite = {} as ConsoleSuite;
  before(async () => {
    suite.server = await startServer({ ini });
    suite.browser = await launchChromium();
    suite.tab = await openContext(suite.browser, suite.server);
  });
  after(async () => {
    await suite.tab?.context.close();
    await suite.browser?.close();
    await suite.server?.close();
  });
  return suite;
}
