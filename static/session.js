// Divan's login page (/_utils/session.html): log in, see the session, change the password, log out.
// A plain ES module without dependencies, loaded under a strict Content-Security-Policy: no inline
// script or style, requests only to this origin. Server text is always shown with textContent.

/** Where the page lives; also where a login goes when the `return` path is unusable. */
export const SESSION_PAGE = '/_utils/session.html';

/** `[chttpd_auth] timeout` when the page cannot read it (only server admins can). */
export const DEFAULT_TIMEOUT_SECONDS = 600;

/**
 * The `return` parameter if it is a path on this server, else undefined: it must start with one
 * `/` (not `//` or `/\`, which browsers read as another host), contain no backslash and no control
 * character (the URL parser drops tabs and newlines, so `/\t/evil` would become `//evil`), and
 * resolve to `origin` when one is given.
 *
 * @param {unknown} value
 * @param {string} [origin]
 * @returns {string | undefined}
 */
export function safeReturnPath(value, origin) {
  if (typeof value !== 'string' || !value.startsWith('/')) return undefined;
  if (value.startsWith('//') || value.includes('\\')) return undefined;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f-\u009f]/.test(value)) return undefined;
  if (origin !== undefined) {
    try {
      if (new URL(value, origin).origin !== origin) return undefined;
    } catch {
      return undefined;
    }
  }
  return value;
}

/**
 * A failed login in words. The server answers a wrong password, an unknown user and a wrong or
 * missing one-time code alike (401), so as not to tell which one was wrong.
 *
 * @param {number} status
 * @param {unknown} body
 * @returns {string}
 */
export function loginErrorMessage(status, body) {
  const reason = reasonOf(body);
  if (status === 401) {
    return 'Wrong user name or password (or one-time code, if your account uses one). Please try again.';
  }
  if (status === 403 && /locked/i.test(reason)) {
    return 'Too many failed attempts: logins to this account from your address are locked for a few minutes. Please wait, then try again.';
  }
  return serverErrorMessage('The server refused the login', status, body);
}

/**
 * Any other error answer in words, keeping the server's own reason.
 *
 * @param {string} what
 * @param {number} status
 * @param {unknown} body
 * @returns {string}
 */
export function serverErrorMessage(what, status, body) {
  const reason = reasonOf(body);
  if (status >= 500) return `${what}: the server had a problem (${status}${reason === '' ? '' : `: ${reason}`}). Please try again later.`;
  return `${what} (${status}${reason === '' ? '' : `: ${reason}`}).`;
}

/** @param {unknown} body */
function reasonOf(body) {
  if (body !== null && typeof body === 'object' && 'reason' in body && typeof body.reason === 'string') return body.reason;
  return '';
}

/**
 * "10 minutes", "90 seconds".
 *
 * @param {number} seconds
 */
export function formatDuration(seconds) {
  if (seconds % 3600 === 0 && seconds >= 7200) return `${seconds / 3600} hours`;
  if (seconds % 60 === 0) return seconds === 60 ? '1 minute' : `${seconds / 60} minutes`;
  return `${seconds} seconds`;
}

const NETWORK_ERROR = 'Could not reach the server. Check your connection, then try again.';

/** How `info.authenticated` names the handler, in words. */
const HANDLERS = new Map([
  ['cookie', 'Session cookie'],
  ['default', 'Name and password sent with each request (HTTP Basic)'],
  ['proxy', 'A trusted proxy'],
  ['jwt', 'A bearer token (JWT)'],
]);

/**
 * One request to this server. `Accept: application/json` gets the 401 itself rather than the
 * browser redirect; `X-CouchDB-WWW-Authenticate: Cookie` keeps a configured Basic challenge from
 * popping up the browser's own password dialog.
 *
 * @param {string} method
 * @param {string} path
 * @param {unknown} [body]
 * @returns {Promise<{ status: number, ok: boolean, body: any, at: number }>}
 */
async function api(method, path, body) {
  /** @type {Record<string, string>} */
  const headers = { Accept: 'application/json', 'X-CouchDB-WWW-Authenticate': 'Cookie' };
  /** @type {RequestInit} */
  const init = { method, headers, credentials: 'same-origin', cache: 'no-store', redirect: 'manual' };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const at = Date.now();
  let data;
  try {
    data = await response.json();
  } catch {
    data = undefined;
  }
  return { status: response.status, ok: response.ok, body: data, at };
}

function page() {
  /** @param {string} id */
  const element = (id) => {
    const found = document.getElementById(id);
    if (found === null) throw new Error(`session.html lacks #${id}`);
    return found;
  };
  return {
    title: element('title'),
    reason: element('reason'),
    reasonText: element('reason-text'),
    returnNote: element('return-note'),
    returnPath: element('return-path'),
    returnIgnored: element('return-ignored'),
    error: element('error'),
    status: element('status'),
    loginSection: element('login-section'),
    loginHeading: element('login-heading'),
    loginForm: /** @type {HTMLFormElement} */ (element('login-form')),
    name: /** @type {HTMLInputElement} */ (element('name')),
    password: /** @type {HTMLInputElement} */ (element('password')),
    token: /** @type {HTMLInputElement} */ (element('token')),
    loginButton: /** @type {HTMLButtonElement} */ (element('login-button')),
    sessionSection: element('session-section'),
    sessionHeading: element('session-heading'),
    userName: element('user-name'),
    userRoles: element('user-roles'),
    userAuth: element('user-auth'),
    userExpiry: element('user-expiry'),
    continue: element('continue'),
    continueLink: /** @type {HTMLAnchorElement} */ (element('continue-link')),
    logoutButton: /** @type {HTMLButtonElement} */ (element('logout-button')),
    passwordForm: /** @type {HTMLFormElement} */ (element('password-form')),
    newPassword: /** @type {HTMLInputElement} */ (element('new-password')),
    confirmPassword: /** @type {HTMLInputElement} */ (element('confirm-password')),
    passwordButton: /** @type {HTMLButtonElement} */ (element('password-button')),
  };
}

/**
 * @param {string} tag
 * @param {string} text
 * @param {string} [className]
 */
function node(tag, text, className) {
  const created = document.createElement(tag);
  created.textContent = text;
  if (className !== undefined) created.className = className;
  return created;
}

function start() {
  const ui = page();
  const params = new URLSearchParams(location.search);
  const reason = params.get('reason');
  const rawReturn = params.get('return');
  const returnPath = rawReturn === null ? undefined : safeReturnPath(rawReturn, location.origin);
  const arrivedWithReason = reason !== null && reason !== '';
  // While the server's reason stands (until a login or logout here), a logged-in user is offered
  // another login: the server sent them here although they were logged in.
  let reasonStands = arrivedWithReason;

  /** @type {{ name: string, roles: string[], handler: string | undefined } | undefined} */
  let current;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let expiryTimer;

  // Client-side checks report into the live regions, not the browser's own bubbles.
  ui.loginForm.noValidate = true;
  ui.passwordForm.noValidate = true;
  for (const input of [ui.name, ui.password, ui.token, ui.newPassword, ui.confirmPassword]) {
    input.addEventListener('input', () => input.removeAttribute('aria-invalid'));
  }

  if (arrivedWithReason) ui.reasonText.textContent = reason;
  else ui.reasonText.parentElement?.setAttribute('hidden', '');
  if (returnPath !== undefined) {
    ui.returnPath.textContent = returnPath;
    ui.returnNote.hidden = false;
  } else if (rawReturn !== null) {
    ui.returnIgnored.hidden = false;
  }
  ui.reason.hidden = !arrivedWithReason && rawReturn === null;

  /** @param {string} text */
  function showError(text) {
    ui.status.textContent = '';
    ui.error.textContent = text;
  }
  /** @param {string} text */
  function showStatus(text) {
    ui.error.textContent = '';
    ui.status.textContent = text;
  }
  function clearMessages() {
    ui.error.textContent = '';
    ui.status.textContent = '';
    for (const input of [ui.name, ui.password, ui.token, ui.newPassword, ui.confirmPassword]) input.removeAttribute('aria-invalid');
  }
  /**
   * @param {HTMLInputElement} input
   * @param {string} text
   */
  function invalid(input, text) {
    showError(text);
    input.setAttribute('aria-invalid', 'true');
    input.focus();
  }
  /**
   * @param {HTMLButtonElement} button
   * @param {boolean} busy
   */
  function setBusy(button, busy) {
    button.disabled = busy;
    button.form?.setAttribute('aria-busy', String(busy));
    if (!busy) button.form?.removeAttribute('aria-busy');
  }

  function showLoggedOut() {
    current = undefined;
    if (expiryTimer !== undefined) clearTimeout(expiryTimer);
    expiryTimer = undefined;
    ui.title.textContent = 'Log in';
    document.title = 'Log in · Divan';
    ui.sessionSection.hidden = true;
    ui.loginSection.hidden = false;
    ui.loginHeading.textContent = 'Log in';
    ui.loginHeading.classList.add('visually-hidden');
  }

  /**
   * @param {string} handler
   */
  function describeHandler(handler) {
    ui.userAuth.replaceChildren();
    ui.userAuth.append(`${HANDLERS.get(handler) ?? 'Another handler'} (`, node('code', handler), ')');
  }

  /**
   * The cookie itself is HttpOnly, so the page cannot read its expiry: it counts the server's
   * timeout from the last request that renewed it (the login, or this page's last look at
   * /_session). CouchDB renews a cookie on any request once a tenth of the timeout has passed, so
   * the real end is at most a tenth earlier than shown, unless the session is used again.
   *
   * @param {number} since
   * @param {{ seconds: number, known: boolean }} timeout
   */
  function describeExpiry(since, timeout) {
    ui.userExpiry.replaceChildren();
    const ends = new Date(since + timeout.seconds * 1000);
    const clock = node('time', ends.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }));
    clock.setAttribute('datetime', ends.toISOString());
    ui.userExpiry.append(
      'Ends about ',
      clock,
      ` (${formatDuration(timeout.seconds)} after your last request; each request renews it).`,
      node(
        'p',
        timeout.known
          ? `${timeout.seconds} s: the server's [chttpd_auth] timeout.`
          : `${timeout.seconds} s: the default [chttpd_auth] timeout; only server admins can read the actual setting.`,
        'help',
      ),
    );
    if (expiryTimer !== undefined) clearTimeout(expiryTimer);
    const delay = ends.getTime() - Date.now() + 2000;
    // Look again once the cookie should be gone, so the page does not claim a dead session.
    if (delay > 0 && delay < 2 ** 31 - 1) expiryTimer = setTimeout(() => void checkExpired(), delay);
  }

  async function checkExpired() {
    const session = await readSession();
    if (session === undefined) return;
    if (session.userCtx.name === null) {
      showLoggedOut();
      showStatus('Your session has expired. Please log in again.');
    } else {
      // Renewed meanwhile (another tab, a refresh of the cookie): show the new end.
      await showLoggedIn(session, session.at);
    }
  }

  /** @param {string[]} roles */
  async function timeoutSetting(roles) {
    if (!roles.includes('_admin')) return { seconds: DEFAULT_TIMEOUT_SECONDS, known: false };
    try {
      const answer = await api('GET', '/_node/_local/_config/chttpd_auth/timeout');
      if (answer.status === 404) return { seconds: DEFAULT_TIMEOUT_SECONDS, known: true };
      const seconds = Number.parseInt(String(answer.body), 10);
      if (answer.ok && Number.isSafeInteger(seconds) && seconds > 0) return { seconds, known: true };
    } catch {
      // Fall back to the default below.
    }
    return { seconds: DEFAULT_TIMEOUT_SECONDS, known: false };
  }

  /**
   * @param {{ userCtx: { name: string, roles: string[] }, info?: { authenticated?: string } }} session
   * @param {number} since
   */
  async function showLoggedIn(session, since) {
    const { name, roles } = session.userCtx;
    const handler = session.info?.authenticated;
    current = { name, roles, handler };
    ui.title.textContent = 'You are logged in';
    document.title = `${name} · Divan`;
    ui.userName.textContent = name;
    ui.userRoles.replaceChildren(...(roles.length === 0 ? [node('span', 'none')] : roles.map((role) => node('span', role, 'role'))));
    describeHandler(handler ?? 'unknown');
    if (handler === 'cookie') {
      describeExpiry(since, await timeoutSetting(roles));
    } else {
      ui.userExpiry.replaceChildren(`None: this request was authenticated by ${handler ?? 'an unknown handler'}, not by a session cookie.`);
    }
    if (returnPath !== undefined) {
      ui.continueLink.href = returnPath;
      ui.continueLink.textContent = `Continue to ${returnPath}`;
      ui.continue.hidden = false;
    }
    ui.sessionSection.hidden = false;
    // Sent here by the server although logged in (e.g. an admin-only path): offer another login.
    ui.loginSection.hidden = !reasonStands;
    ui.loginHeading.textContent = 'Log in as another user';
    ui.loginHeading.classList.remove('visually-hidden');
  }

  /** GET /_session; undefined (with the error shown) when it fails. */
  async function readSession() {
    try {
      const answer = await api('GET', '/_session');
      if (answer.ok && answer.body && typeof answer.body === 'object' && answer.body.userCtx) return { ...answer.body, at: answer.at };
      showError(serverErrorMessage('Could not read your session', answer.status, answer.body));
    } catch {
      showError(NETWORK_ERROR);
    }
    return undefined;
  }

  /**
   * Shows what the server says about the session now.
   *
   * @param {number} [since] when the cookie was issued, if known (a login just now)
   */
  async function refresh(since) {
    const session = await readSession();
    if (session === undefined) {
      showLoggedOut();
      return false;
    }
    if (session.userCtx.name === null) {
      showLoggedOut();
      return false;
    }
    await showLoggedIn(session, since ?? session.at);
    return true;
  }

  ui.loginForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearMessages();
    const name = ui.name.value;
    const password = ui.password.value;
    const token = ui.token.value.trim();
    if (name.trim() === '') return invalid(ui.name, 'Please enter your user name.');
    if (token !== '' && !/^[0-9]{6,8}$/.test(token)) return invalid(ui.token, 'The one-time code is 6 to 8 digits; leave it empty if your account does not use one.');
    /** @type {Record<string, string>} */
    const credentials = { name, password };
    if (token !== '') credentials.token = token;
    setBusy(ui.loginButton, true);
    try {
      const answer = await api('POST', '/_session', credentials);
      ui.password.value = '';
      ui.token.value = '';
      if (!answer.ok) {
        showError(loginErrorMessage(answer.status, answer.body));
        ui.password.setAttribute('aria-invalid', 'true');
        ui.password.focus();
        return;
      }
      if (returnPath !== undefined) {
        showStatus(`Logged in. Going back to ${returnPath}…`);
        location.assign(returnPath);
        return;
      }
      ui.reason.hidden = true;
      reasonStands = false;
      if (await refresh(answer.at)) {
        showStatus(`Logged in as ${name}.`);
        ui.sessionHeading.focus();
      }
    } catch {
      showError(NETWORK_ERROR);
    } finally {
      setBusy(ui.loginButton, false);
    }
  });

  ui.logoutButton.addEventListener('click', async () => {
    clearMessages();
    setBusy(ui.logoutButton, true);
    try {
      const answer = await api('DELETE', '/_session');
      if (!answer.ok) {
        showError(serverErrorMessage('The server refused to log you out', answer.status, answer.body));
        return;
      }
      ui.reason.hidden = true;
      reasonStands = false;
      const name = current?.name ?? '';
      if (await refresh()) {
        // The cookie is gone, but the browser still sends Basic credentials or a proxy adds headers.
        showStatus(`Your session cookie is cleared, but the server still knows you as ${current?.name} (${current?.handler}): your browser or a proxy sends those credentials itself.`);
        return;
      }
      ui.name.value = name;
      showStatus('You are logged out.');
      ui.name.focus();
    } catch {
      showError(NETWORK_ERROR);
    } finally {
      setBusy(ui.logoutButton, false);
    }
  });

  ui.passwordForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearMessages();
    const password = ui.newPassword.value;
    if (password === '') return invalid(ui.newPassword, 'Please enter a new password.');
    if (password !== ui.confirmPassword.value) return invalid(ui.confirmPassword, 'The two new passwords differ. Please type the same password twice.');
    if (current === undefined) return showError('You are not logged in.');
    const { name, roles } = current;
    const path = `/_users/${encodeURIComponent(`org.couchdb.user:${name}`)}`;
    setBusy(ui.passwordButton, true);
    try {
      const read = await api('GET', path);
      if (read.status === 401) {
        showLoggedOut();
        ui.name.value = name;
        return invalid(ui.password, 'Your session has expired. Please log in again, then change your password.');
      }
      if (read.status === 404 && roles.includes('_admin')) {
        return showError(`${name} is a server admin of the configuration file ([admins]), with no user document to change. A server admin changes that password with PUT /_node/_local/_config/admins/${name}.`);
      }
      if (!read.ok || read.body === null || typeof read.body !== 'object') {
        return showError(serverErrorMessage('Could not read your user document', read.status, read.body));
      }
      const doc = { ...read.body, password };
      const write = await api('PUT', path, doc);
      if (!write.ok) {
        if (write.status === 409) return showError('Your user document changed in the meantime. Please try again.');
        if (write.status === 401) {
          showLoggedOut();
          ui.name.value = name;
          return invalid(ui.password, 'Your session has expired. Please log in again, then change your password.');
        }
        return showError(serverErrorMessage('The server did not accept the new password', write.status, write.body));
      }
      ui.newPassword.value = '';
      ui.confirmPassword.value = '';
      // A new password gets a new salt, which ends every cookie of the old one: log in afresh,
      // unless a one-time code is needed, which only the user can give.
      const usesCode = doc.totp !== null && typeof doc.totp === 'object';
      const again = usesCode ? undefined : await api('POST', '/_session', { name, password });
      if (again?.ok && (await refresh(again.at))) {
        showStatus('Your password is changed. You are still logged in, now with the new password.');
        ui.sessionHeading.focus();
        return;
      }
      showLoggedOut();
      ui.name.value = name;
      showStatus(`Your password is changed. Please log in again with the new password${usesCode ? ' and a one-time code' : ''}.`);
      ui.password.focus();
    } catch {
      showError(NETWORK_ERROR);
    } finally {
      setBusy(ui.passwordButton, false);
    }
  });

  void refresh();
}

if (typeof document !== 'undefined' && typeof location !== 'undefined') start();
