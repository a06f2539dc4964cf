// Divan's admin console (/_utils/): the session, the navigation and the hash router. Each page is
// a module with a `render(context)`; the router gives it a fresh container and its parameters.
import { UNAUTHORIZED_EVENT, api, failure, loginUrl } from './api.js';
import { button, h, messages } from './dom.js';
import * as databases from './databases.js';
import * as documents from './documents.js';
import * as documentPage from './document.js';
import * as security from './security.js';
import * as users from './users.js';
import * as config from './config.js';
import * as tasks from './tasks.js';
import * as metrics from './metrics.js';
import * as mango from './mango.js';
import * as searchPage from './search.js';
import * as views from './views.js';
import * as viewPage from './view.js';
import * as designFunction from './design-function.js';
import * as replication from './replication.js';

/**
 * @typedef {{ name: string, roles: string[] }} Session
 * @typedef {{ view: HTMLElement, segments: string[], params: URLSearchParams, session: Session, isAdmin: boolean,
 *   title: (text: string) => HTMLElement, go: (hash: string, note?: string) => void, reload: (note?: string) => void }} Context
 */

/** @type {Map<string, { render: (context: Context) => Promise<void> }>} */
const PAGES = new Map([
  ['users', users],
  ['config', config],
  ['tasks', tasks],
  ['metrics', metrics],
  ['replication', replication],
]);

/**
 * The page for a hash: `#/db/{db}/doc/{id}?rev=…` → the document page with its segments.
 *
 * @param {string} hash
 * @returns {{ page: { render: (context: Context) => Promise<void> }, segments: string[], params: URLSearchParams, nav: string }}
 */
export function route(hash) {
  const [path = '', search = ''] = hash.replace(/^#/, '').split('?', 2);
  const segments = path.split('/').filter((part) => part !== '').map(safeDecode);
  const params = new URLSearchParams(search);
  const [first, db, what] = segments;
  if (first === 'db' && db !== undefined) {
    if (what === 'doc' || what === 'new') return { page: documentPage, segments, params, nav: 'databases' };
    if (what === 'security') return { page: security, segments, params, nav: 'databases' };
    if (what === 'mango') return { page: mango, segments, params, nav: 'databases' };
    if (what === 'search') return { page: searchPage, segments, params, nav: 'databases' };
    if (what === 'views') return { page: segments[4] === undefined ? views : viewPage, segments, params, nav: 'databases' };
    if (what === 'design') return { page: designFunction, segments, params, nav: 'databases' };
    return { page: documents, segments, params, nav: 'databases' };
  }
  const page = first === undefined ? undefined : PAGES.get(first);
  if (first !== undefined && page !== undefined) return { page, segments, params, nav: first };
  return { page: databases, segments, params, nav: 'databases' };
}

/** @param {string} part */
function safeDecode(part) {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

/** The signed-in user, or undefined after sending the browser to the login page. */
async function readSession() {
  const answer = await api('GET', '/_session');
  const userCtx = answer.body?.userCtx;
  if (answer.ok && userCtx && typeof userCtx.name === 'string') return { name: userCtx.name, roles: Array.isArray(userCtx.roles) ? userCtx.roles : [] };
  if (answer.ok) {
    location.assign(loginUrl());
    return undefined;
  }
  messages.error(failure('Could not read your session', answer));
  return undefined;
}

/** @param {Session} session */
function showUser(session) {
  const who = /** @type {HTMLElement} */ (document.getElementById('who'));
  const roles = session.roles.length === 0 ? 'no roles' : session.roles.join(', ');
  who.replaceChildren(h('span', null, 'Signed in as '), h('strong', { id: 'who-name' }, session.name), h('span', { className: 'muted' }, ` (${roles})`));
  const signOut = button('Sign out', async () => {
    const answer = await api('DELETE', '/_session');
    if (!answer.ok) return messages.error(failure('The server did not sign you out', answer));
    location.assign(`${loginUrl('You signed out of the admin console.')}`);
  }, 'secondary', { id: 'sign-out' });
  who.append(signOut);
}

/** @type {string | undefined} a message for the next page shown (after a create, a delete) */
let pendingNote;
/** How many pages were shown: each knows whether it is still the latest. */
let renders = 0;

/**
 * @param {Session} session
 * @param {{ focus: boolean }} options
 */
async function show(session, options) {
  const { page, segments, params, nav } = route(location.hash);
  for (const link of document.querySelectorAll('#nav a')) {
    if (link.getAttribute('data-nav') === nav) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  const view = h('div', { id: 'view-content' });
  const container = /** @type {HTMLElement} */ (document.getElementById('view'));
  const shown = ++renders;
  container.replaceChildren(view);
  container.setAttribute('aria-busy', 'true');
  messages.clear();
  if (pendingNote !== undefined) messages.status(pendingNote);
  pendingNote = undefined;
  /** @type {Context} */
  const context = {
    view,
    segments,
    params,
    session,
    isAdmin: session.roles.includes('_admin'),
    title(text) {
      const heading = h('h1', { id: 'view-title', tabindex: '-1' }, text);
      view.prepend(heading);
      document.title = `${text} · Divan`;
      if (options.focus) heading.focus();
      return heading;
    },
    go(hash, note) {
      pendingNote = note;
      if (location.hash === hash) void show(session, { focus: true });
      else location.hash = hash;
    },
    reload(note) {
      pendingNote = note;
      void show(session, { focus: false });
    },
  };
  try {
    await page.render(context);
  } catch (error) {
    // An answer the page did not expect: said in words rather than a half-drawn page.
    messages.error(`This page could not be shown: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    // Only the latest page says it is done: an older one may still finish after a quick click.
    if (shown === renders) container.setAttribute('aria-busy', 'false');
  }
}

/**
 * After a 401: if the session has ended (the cookie expired, a sign-out in another tab), say so
 * with a link to sign in again that comes back here. A 401 with the session alive (a database
 * admin on a server admin's page) is left to the page's own message.
 */
async function checkSessionEnded() {
  const answer = await api('GET', '/_session');
  if (!answer.ok || answer.body?.userCtx?.name !== null) return;
  const who = /** @type {HTMLElement} */ (document.getElementById('who'));
  if (document.getElementById('session-ended') !== null) return;
  who.replaceChildren(h('p', { id: 'session-ended', className: 'notice' }, 'Your session has ended. ', h('a', { href: loginUrl('Your session ended. Sign in again to go on.') }, 'Sign in again')));
}

async function start() {
  const session = await readSession();
  if (session === undefined) return;
  showUser(session);
  window.addEventListener(UNAUTHORIZED_EVENT, () => void checkSessionEnded());
  window.addEventListener('hashchange', () => void show(session, { focus: true }));
  await show(session, { focus: false });
}

if (typeof window !== 'undefined' && typeof location !== 'undefined') void start();
