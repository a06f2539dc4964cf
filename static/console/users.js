// Users: the _users database's user documents; create one, change its roles, reset its password,
// delete it. Server admins of the [admins] section have no document: see the configuration page.
import { api, dbPath, failure, query } from './api.js';
import { button, field, form, h, invalid, messages, table } from './dom.js';
import { listText, parseList } from './format.js';

const PREFIX = 'org.couchdb.user:';
const PAGE_SIZE = 50;

/** @param {string} name */
const userPath = (name) => dbPath('_users', `${PREFIX}${name}`);
/** @param {string} name */
const userHash = (name) => `#/users/${encodeURIComponent(name)}`;

/** @param {import('./app.js').Context} context */
export async function render(context) {
  const name = context.segments[1];
  if (name !== undefined) return renderUser(context, name);
  context.title('Users');
  context.view.append(createForm(context), h('p', { className: 'help' }, 'Server admins listed in the configuration file ([admins]) have no user document; they are on the ', h('a', { href: '#/config' }, 'configuration page'), '.'));
  const skip = Math.max(0, Number.parseInt(context.params.get('skip') ?? '0', 10) || 0);
  const range = { startkey: JSON.stringify(PREFIX), endkey: JSON.stringify(`${PREFIX}\ufff0`), include_docs: true, limit: PAGE_SIZE + 1, skip };
  const answer = await api('GET', `${dbPath('_users')}/_all_docs${query(range)}`);
  if (!answer.ok) return void context.view.append(h('p', { className: 'notice' }, failure('Could not list the users', answer)));
  /** @type {Array<{ doc: any }>} */
  const rows = answer.body.rows.slice(0, PAGE_SIZE);
  const cells = rows.map(({ doc }) => [h('a', { href: userHash(String(doc?.name ?? '')) }, String(doc?.name ?? '')), listText(doc?.roles) || '—', doc?.totp ? 'yes' : 'no']);
  const section = h('section', { 'aria-labelledby': 'users-heading' }, h('h2', { id: 'users-heading' }, 'User documents'), table('Users', ['Name', 'Roles', 'One-time codes'], cells, 'No users yet.'));
  const pager = h('nav', { className: 'pager', 'aria-label': 'Pages of users' });
  if (skip > 0) pager.append(h('a', { href: `#/users?skip=${Math.max(0, skip - PAGE_SIZE)}` }, '← Previous'));
  if (answer.body.rows.length > PAGE_SIZE) pager.append(h('a', { href: `#/users?skip=${skip + PAGE_SIZE}` }, 'Next →'));
  section.append(pager);
  context.view.append(section);
}

/** @param {import('./app.js').Context} context */
function createForm(context) {
  const name = field('User name', { id: 'new-user-name', autocapitalize: 'none', spellcheck: 'false', autocomplete: 'off' });
  const password = field('Password', { id: 'new-user-password', type: 'password', autocomplete: 'new-password' });
  const roles = field('Roles', { id: 'new-user-roles', autocapitalize: 'none', spellcheck: 'false' }, 'Separated by commas or spaces; may be empty.');
  const children = [h('h2', null, 'Create a user'), name.wrapper, password.wrapper, roles.wrapper, h('button', { type: 'submit', id: 'create-user' }, 'Create user')];
  return form({ id: 'create-user-form', 'aria-label': 'Create a user' }, children, async () => {
    const user = name.control.value.trim();
    if (user === '' || user.startsWith('_') || user.includes(':')) return invalid(name.control, 'A user name is not empty, does not start with _ and has no colon.');
    if (password.control.value === '') return invalid(password.control, 'Please give the new user a password.');
    const doc = { _id: `${PREFIX}${user}`, name: user, type: 'user', roles: parseList(roles.control.value), password: password.control.value };
    const answer = await api('PUT', userPath(user), doc);
    if (answer.status === 409) return invalid(name.control, `A user named ${user} exists already.`);
    if (!answer.ok) return invalid(name.control, failure(`Could not create ${user}`, answer));
    context.go(userHash(user), `User ${user} created.`);
  });
}

/**
 * @param {import('./app.js').Context} context
 * @param {string} name
 */
async function renderUser(context, name) {
  context.view.append(h('p', { className: 'crumbs' }, h('a', { href: '#/users' }, '← Users')));
  context.title(`User ${name}`);
  const answer = await api('GET', userPath(name));
  if (!answer.ok) return void context.view.append(h('p', { className: 'notice', id: 'user-unavailable' }, failure(`Could not read the user ${name}`, answer)));
  const doc = answer.body;
  const facts = [
    ['Name', String(doc.name ?? name)],
    ['Roles', listText(doc.roles) || 'none'],
    ['One-time codes (TOTP)', doc.totp ? 'enabled' : 'not enabled'],
    ['Password hash', `${String(doc.password_scheme ?? '—')}${doc.iterations ? `, ${doc.iterations} iterations` : ''}`],
  ];
  context.view.append(
    h('dl', { className: 'facts', id: 'user-facts' }, ...facts.map(([term, value]) => h('div', null, h('dt', null, term), h('dd', null, value)))),
    rolesForm(context, doc),
    passwordForm(context, doc),
    deleteUser(context, doc),
  );
}

/**
 * @param {import('./app.js').Context} context
 * @param {any} doc
 */
function rolesForm(context, doc) {
  const roles = field('Roles', { id: 'user-roles-input', autocapitalize: 'none', spellcheck: 'false', value: listText(doc.roles) }, 'Separated by commas or spaces.');
  return form({ id: 'roles-form', 'aria-label': 'Roles' }, [h('h2', null, 'Roles'), roles.wrapper, h('button', { type: 'submit', id: 'save-roles' }, 'Save roles')], async () => {
    const list = parseList(roles.control.value);
    if (list.some((role) => role.startsWith('_'))) return invalid(roles.control, 'Roles starting with _ are the server\'s own (like _admin); they cannot be given here.');
    const answer = await api('PUT', userPath(doc.name), { ...doc, roles: list });
    if (!answer.ok) return invalid(roles.control, failure('The server did not save the roles', answer));
    context.reload(`The roles of ${doc.name} are saved.`);
  });
}

/**
 * @param {import('./app.js').Context} context
 * @param {any} doc
 */
function passwordForm(context, doc) {
  const password = field('New password', { id: 'reset-password', type: 'password', autocomplete: 'new-password' });
  const again = field('New password, again', { id: 'reset-password-again', type: 'password', autocomplete: 'new-password' });
  const children = [h('h2', null, 'Reset the password'), password.wrapper, again.wrapper, h('button', { type: 'submit', id: 'save-password' }, 'Set password')];
  return form({ id: 'password-form', 'aria-label': 'Reset the password' }, children, async () => {
    if (password.control.value === '') return invalid(password.control, 'Please type the new password.');
    if (password.control.value !== again.control.value) return invalid(again.control, 'The two passwords differ. Please type the same password twice.');
    const answer = await api('PUT', userPath(doc.name), { ...doc, password: password.control.value });
    if (!answer.ok) return invalid(password.control, failure('The server did not accept the new password', answer));
    context.reload(`The password of ${doc.name} is reset. Their sessions of the old password have ended.`);
  });
}

/**
 * @param {import('./app.js').Context} context
 * @param {any} doc
 */
function deleteUser(context, doc) {
  const section = h('section', { 'aria-labelledby': 'delete-user-heading' }, h('h2', { id: 'delete-user-heading' }, 'Delete this user'));
  const start = button(`Delete ${doc.name}…`, () => {
    const confirm = button('Delete for good', async () => {
      const answer = await api('DELETE', `${userPath(doc.name)}${query({ rev: doc._rev })}`);
      if (!answer.ok) return messages.error(failure(`Could not delete ${doc.name}`, answer));
      context.go('#/users', `User ${doc.name} deleted.`);
    }, 'danger', { id: 'confirm-delete-user' });
    start.replaceWith(h('div', { className: 'actions' }, confirm, button('Cancel', () => context.reload(), 'secondary')));
    confirm.focus();
  }, 'danger', { id: 'delete-user' });
  section.append(start);
  return section;
}
