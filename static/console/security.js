// A database's _security object: its admins and members, by name and by role. Other members of
// the object (set by other tools) are kept as they are.
import { api, dbPath, failure } from './api.js';
import { field, form, h, invalid } from './dom.js';
import { listText, parseList } from './format.js';

const GROUPS = [
  ['admins', 'Admins', 'may change design documents and this _security object'],
  ['members', 'Members', 'may read and write documents; with no members at all, the database is public'],
];

/** @param {import('./app.js').Context} context */
export async function render(context) {
  const db = context.segments[1] ?? '';
  context.view.append(h('p', { className: 'crumbs' }, h('a', { href: `#/db/${encodeURIComponent(db)}` }, `← ${db}`)));
  context.title(`Security of ${db}`);
  const answer = await api('GET', `${dbPath(db)}/_security`);
  if (!answer.ok) {
    context.view.append(h('p', { className: 'notice', id: 'security-unavailable' }, failure(`Could not read the _security of ${db}`, answer)));
    return;
  }
  const security = answer.body && typeof answer.body === 'object' ? answer.body : {};
  /** @type {Array<[string, string, HTMLInputElement]>} */
  const inputs = [];
  const fieldsets = GROUPS.map(([key, label, help]) => {
    const group = security[key] && typeof security[key] === 'object' ? security[key] : {};
    const names = field(`${label}: user names`, { id: `${key}-names`, name: `${key}-names`, autocapitalize: 'none', spellcheck: 'false', value: listText(group.names) }, 'Separated by commas or spaces.');
    const roles = field(`${label}: roles`, { id: `${key}-roles`, name: `${key}-roles`, autocapitalize: 'none', spellcheck: 'false', value: listText(group.roles) });
    inputs.push([key, 'names', names.control], [key, 'roles', roles.control]);
    return h('fieldset', null, h('legend', null, `${label} (${help})`), names.wrapper, roles.wrapper);
  });
  const saveForm = form({ id: 'security-form', 'aria-label': `The _security of ${db}` }, [...fieldsets, h('button', { type: 'submit', id: 'save-security' }, 'Save')], async () => {
    const next = { ...security };
    for (const [key, kind, input] of inputs) {
      const list = parseList(input.value);
      if (list.some((item) => item.startsWith('_') && kind === 'names')) return invalid(input, 'A user name cannot start with an underscore.');
      next[key] = { ...(next[key] && typeof next[key] === 'object' ? next[key] : {}), [kind]: list };
    }
    const write = await api('PUT', `${dbPath(db)}/_security`, next);
    if (!write.ok) return invalid(/** @type {HTMLElement} */ (inputs[0]?.[2]), failure('The server did not accept the _security object', write));
    context.reload(`The _security of ${db} is saved.`);
  });
  context.view.append(
    saveForm,
    h('h2', null, 'As stored'),
    h('pre', { className: 'code', id: 'security-json', tabindex: '0', 'aria-label': 'The _security object as JSON' }, JSON.stringify(security, null, 2)),
  );
}
