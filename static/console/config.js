// The configuration (/_node/_local/_config): every section and value, a filter, changing a value
// in place, adding a setting, and removing one (back to its default).
import { api, failure } from './api.js';
import { button, field, form, h, invalid, messages } from './dom.js';

/**
 * @param {string} section
 * @param {string} key
 */
const settingPath = (section, key) => `/_node/_local/_config/${encodeURIComponent(section)}/${encodeURIComponent(key)}`;

/** @param {import('./app.js').Context} context */
export async function render(context) {
  context.title('Configuration');
  const answer = await api('GET', '/_node/_local/_config');
  if (!answer.ok) return void context.view.append(h('p', { className: 'notice', id: 'config-unavailable' }, failure('The configuration is for server admins', answer)));
  /** @type {Record<string, Record<string, string>>} */
  const sections = answer.body;
  const list = h('div', { id: 'config-sections' }, ...Object.keys(sections).sort().map((name) => sectionTable(context, name, sections[name] ?? {})));
  const filter = field('Filter', { id: 'config-filter', type: 'search', autocapitalize: 'none', spellcheck: 'false' }, 'Shows only the settings whose section, key or value contains this text.');
  filter.control.addEventListener('input', () => applyFilter(list, filter.control.value.trim().toLowerCase()));
  context.view.append(h('p', { className: 'help' }, 'Changes apply at once and are written to the local configuration file.'), addForm(context), filter.wrapper, list);
}

/**
 * @param {HTMLElement} list
 * @param {string} text
 */
function applyFilter(list, text) {
  for (const section of list.querySelectorAll('section')) {
    let shown = 0;
    for (const row of section.querySelectorAll('tbody tr')) {
      const match = text === '' || (row.getAttribute('data-search') ?? '').includes(text);
      /** @type {HTMLElement} */ (row).hidden = !match;
      if (match) shown++;
    }
    /** @type {HTMLElement} */ (section).hidden = shown === 0;
  }
}

/**
 * @param {import('./app.js').Context} context
 * @param {string} name
 * @param {Record<string, string>} values
 */
function sectionTable(context, name, values) {
  const rows = Object.keys(values).sort().map((key) => settingRow(context, name, key, String(values[key])));
  const head = h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Key'), h('th', { scope: 'col' }, 'Value'), h('th', { scope: 'col' }, 'Actions')));
  return h('section', { 'aria-label': `Section ${name}` }, h('h2', null, `[${name}]`), h('div', { className: 'table-wrap' }, h('table', { className: 'config' }, head, h('tbody', null, ...rows))));
}

/**
 * @param {import('./app.js').Context} context
 * @param {string} section
 * @param {string} key
 * @param {string} value
 */
function settingRow(context, section, key, value) {
  const valueCell = h('td', { 'data-label': 'Value' }, h('code', null, value));
  const actions = h('td', { 'data-label': 'Actions' });
  const row = h('tr', { 'data-search': `${section} ${key} ${value}`.toLowerCase(), 'data-setting': `${section}/${key}` }, h('th', { scope: 'row' }, key), valueCell, actions);
  const edit = button('Edit', () => {
    const input = field(`New value of ${section}/${key}`, { value, autocapitalize: 'none', spellcheck: 'false', className: 'config-input' });
    const save = form({ className: 'inline-form', 'aria-label': `Change ${section}/${key}` }, [input.wrapper, h('button', { type: 'submit' }, 'Save'), button('Cancel', () => context.reload(), 'secondary')], async () => {
      const answer = await api('PUT', settingPath(section, key), input.control.value);
      if (!answer.ok) return invalid(input.control, failure(`The server did not accept ${section}/${key}`, answer));
      context.reload(`${section}/${key} is saved.`);
    });
    valueCell.replaceChildren(save);
    actions.replaceChildren();
    input.control.focus();
  }, 'secondary', { 'aria-label': `Edit ${section}/${key}` });
  const remove = button('Remove', async () => {
    const answer = await api('DELETE', settingPath(section, key));
    if (!answer.ok) return messages.error(failure(`Could not remove ${section}/${key}`, answer));
    context.reload(`${section}/${key} is removed.`);
  }, 'secondary', { 'aria-label': `Remove ${section}/${key}` });
  actions.append(edit, remove);
  return row;
}

/** @param {import('./app.js').Context} context */
function addForm(context) {
  const section = field('Section', { id: 'config-section', autocapitalize: 'none', spellcheck: 'false' });
  const key = field('Key', { id: 'config-key', autocapitalize: 'none', spellcheck: 'false' });
  const value = field('Value', { id: 'config-value', autocapitalize: 'none', spellcheck: 'false' });
  const children = [h('h2', null, 'Set a value'), section.wrapper, key.wrapper, value.wrapper, h('button', { type: 'submit', id: 'config-set' }, 'Set')];
  return form({ id: 'config-form', className: 'grid-form', 'aria-label': 'Set a configuration value' }, children, async () => {
    if (section.control.value.trim() === '') return invalid(section.control, 'Please name the section.');
    if (key.control.value.trim() === '') return invalid(key.control, 'Please name the key.');
    const answer = await api('PUT', settingPath(section.control.value.trim(), key.control.value.trim()), value.control.value);
    if (!answer.ok) return invalid(value.control, failure('The server did not accept the value', answer));
    context.reload(`${section.control.value.trim()}/${key.control.value.trim()} is set.`);
  });
}
