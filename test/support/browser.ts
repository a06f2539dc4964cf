/**
 * Headless Chromium for the end-to-end tests: Debian's `chromium` package driven by
 * `playwright-core` (no browser download), screenshots under `test-output/browser/`, and a watch
 * on every request and Content-Security-Policy violation of a browser context.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';

export const CHROMIUM_PATH = '/usr/bin/chromium';

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** The repository root (this file runs as dist/test/support/browser.js). */
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** Where the screenshots go; `test-output/` is git-ignored. */
export const SCREENSHOT_DIR = join(REPO_ROOT, 'test-output', 'browser');

/** A skip message when Chromium is not installed, else false (the tests run). */
export function chromiumSkipReason(): string | false {
  if (existsSync(CHROMIUM_PATH)) return false;
  return `Chromium not found at ${CHROMIUM_PATH}: install Debian's chromium package (apt-get install chromium) to run the browser tests`;
}

export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
}

/** Stable pictures: a fixed size, locale, time zone and light colours. */
export const DESKTOP: BrowserContextOptions = {
  viewport: { width: 800, height: 600 },
  deviceScaleFactor: 1,
  locale: 'en-GB',
  timezoneId: 'UTC',
  colorScheme: 'light',
  reducedMotion: 'reduce',
};

export const PHONE: BrowserContextOptions = {
  ...DESKTOP,
  viewport: { width: 375, height: 667 },
  isMobile: true,
  hasTouch: true,
};

/** Saves `test-output/browser/<state>.png` and returns its path. */
export async function screenshot(page: Page, state: string, options: { fullPage?: boolean } = {}): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const path = join(SCREENSHOT_DIR, `${state}.png`);
  await page.screenshot({ path, fullPage: options.fullPage ?? false, animations: 'disabled', caret: 'hide' });
  assert.ok(existsSync(path), `screenshot ${path} written`);
  return path;
}

export interface ContextWatch {
  /** Every URL the pages of the context requested, in order. */
  readonly requests: string[];
  /** CSP violations, reported from inside the pages, and CSP errors of the console. */
  readonly violations: string[];
  /** Fails when a request left `origin` or the CSP blocked anything. */
  assertClean(origin: string): void;
}

/**
 * Records the requests and CSP violations of a context. The reporter is injected through the
 * DevTools protocol, which the page's CSP does not govern, and survives navigations.
 */
export async function watchContext(context: BrowserContext): Promise<ContextWatch> {
  const requests: string[] = [];
  const violations: string[] = [];
  context.on('request', (request) => requests.push(request.url()));
  context.on('console', (message) => {
    if (message.type() === 'error' && /Content Security Policy/i.test(message.text())) violations.push(`console: ${message.text()}`);
  });
  await context.exposeBinding('__reportCspViolation', (_source, text: string) => {
    violations.push(text);
  });
  await context.addInitScript({
    content: `document.addEventListener('securitypolicyviolation', (event) => {
      window.__reportCspViolation(event.violatedDirective + ' blocked ' + event.blockedURI + ' at ' + event.sourceFile + ':' + event.lineNumber);
    });`,
  });
  return {
    requests,
    violations,
    assertClean(origin: string) {
      const foreign = requests.filter((url) => !url.startsWith(`${origin}/`));
      assert.deepEqual(foreign, [], 'no request leaves the origin');
      assert.deepEqual(violations, [], 'the Content-Security-Policy blocked nothing');
    },
  };
}

/** The text of an element (trimmed), '' when it has none. */
export async function textOf(page: Page, selector: string): Promise<string> {
  return ((await page.textContent(selector)) ?? '').trim();
}

/**
 * Waits until an element shows some text, and returns it. (A locator, not waitForFunction with a
 * string: that one polls with eval inside the page, which the page's CSP rightly refuses.)
 */
export async function waitForText(page: Page, selector: string, timeout = 10_000): Promise<string> {
  await page.locator(selector).filter({ hasText: /\S/ }).waitFor({ state: 'visible', timeout });
  return textOf(page, selector);
}

/** The id of the focused element. */
export async function focusedId(page: Page): Promise<string> {
  return (await page.evaluate('document.activeElement ? document.activeElement.id : ""')) as string;
}

/** The outline of the focused element, to check that focus is visible. */
export async function focusOutline(page: Page): Promise<{ style: string; width: string }> {
  return (await page.evaluate(
    '(() => { const style = getComputedStyle(document.activeElement); return { style: style.outlineStyle, width: style.outlineWidth }; })()',
  )) as { style: string; width: string };
}

/** Fails when the page scrolls sideways (content wider than the viewport). */
export async function assertNoHorizontalScroll(page: Page): Promise<void> {
  const { scrollWidth, innerWidth } = (await page.evaluate('({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth })')) as {
    scrollWidth: number;
    innerWidth: number;
  };
  assert.ok(scrollWidth <= innerWidth, `page is ${scrollWidth}px wide in a ${innerWidth}px viewport`);
}
