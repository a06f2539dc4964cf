// DOM helpers of the admin console. Every value from the server reaches the page through
// textContent, attributes set one by one, or DOM nodes: never as HTML.

/**
 * An element with attributes and children. Strings become text nodes; `on*` keys are not
 * attributes here but listeners (`{ onclick: fn }`), so no handler is ever parsed from text.
 *
 * @param {string} tag
 * @param {Record<string, unknown> | null} [attributes]
 * @param {...(Node | string | number | null | undefined | false)} children
 * @returns {HTMLElement}
 */
export function h(tag, attributes, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on')) {
      if (typeof value !== 'function') throw new Error(`${key} must be a function`);
      element.addEventListener(key.slice(2), /** @type {EventListener} */ (value));
    }
    else if (key === 'className') element.className = String(value);
    else if (value === true) element.setAttribute(key, '');
    else element.setAttribute(key, String(value));
  }
  append(element, children);
  return element;
}

/**
 * @param {Element} parent
 * @param {Array<Node | string | number | null | undefined | false>} children
 */
function append(parent, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.append(typeof child === 'number' ? String(child) : child);
  }
}

/**
 * A table: a caption, column headings and rows of cells (text or nodes).
 *
 * @param {string} caption
 * @param {string[]} headings
 * @param {Array<Array<Node | string | number>>} rows
 * @param {string} [empty] shown as a paragraph instead of the table when there are no rows
 */
export function table(caption, headings, rows, empty = 'Nothing here yet.') {
  if (rows.length === 0) return h('p', { className: 'empty' }, empty);
  const head = h('thead', null, h('tr', null, ...headings.map((text) => h('th', { scope: 'col' }, text))));
  const body = h('tbody', null, ...rows.map((cells) => h('tr', null, ...cells.map((cell, index) => h('td', { 'data-label': headings[index] }, cell)))));
  return h('div', { className: 'table-wrap' }, h('table', null, h('caption', null, caption), head, body));
}

let fieldCount = 0;

/**
 * A labelled input (or textarea / select) in a `.field` wrapper.
 *
 * @param {string} label
 * @param {Record<string, unknown>} attributes of the control; `tag` chooses textarea or select
 * @param {string} [help]
 * @returns {{ wrapper: HTMLElement, control: HTMLInputElement }}
 */
export function field(label, attributes, help) {
  const { tag = 'input', options = [], ...rest } = /** @type {Record<string, any>} */ (attributes);
  const id = rest.id ?? `field-${++fieldCount}`;
  const helpId = help === undefined ? undefined : `${id}-help`;
  const control = h(tag, { ...rest, id, 'aria-describedby': helpId }, ...options.map((/** @type {string} */ option) => h('option', { value: option }, option)));
  const wrapper = h('div', { className: 'field' }, h('label', { for: id }, label), control, helpId === undefined ? null : h('p', { id: helpId, className: 'help' }, help));
  return { wrapper, control: /** @type {HTMLInputElement} */ (control) };
}

/**
 * A button; `kind` is a class (`secondary`, `danger`).
 *
 * @param {string} text
 * @param {(event: Event) => unknown} onclick
 * @param {string} [kind]
 * @param {Record<string, unknown>} [attributes]
 */
export function button(text, onclick, kind, attributes = {}) {
  return h('button', { type: 'button', className: kind, onclick, ...attributes }, text);
}

/** The live regions of the page: errors are announced assertively, news politely. */
export const messages = {
  /** @param {string} text */
  error(text) {
    region('status').textContent = '';
    region('error').textContent = text;
  },
  /** @param {string} text */
  status(text) {
    region('error').textContent = '';
    region('status').textContent = text;
  },
  clear() {
    region('error').textContent = '';
    region('status').textContent = '';
  },
};

/** @param {string} id */
function region(id) {
  const found = document.getElementById(id);
  if (found === null) throw new Error(`the console page lacks #${id}`);
  return found;
}

/**
 * Runs `work` with the button disabled and the form marked busy.
 *
 * @template T
 * @param {HTMLButtonElement | HTMLElement} control
 * @param {() => Promise<T>} work
 * @returns {Promise<T>}
 */
export async function busy(control, work) {
  const target = /** @type {HTMLButtonElement} */ (control);
  target.disabled = true;
  target.setAttribute('aria-busy', 'true');
  try {
    return await work();
  } finally {
    target.disabled = false;
    target.removeAttribute('aria-busy');
  }
}

/**
 * A form whose submit runs `onsubmit` (default prevented) with its submit button busy; Ctrl+Enter
 * submits it from any of its fields.
 *
 * @param {Record<string, unknown>} attributes
 * @param {Array<Node>} children
 * @param {(form: HTMLFormElement) => Promise<unknown>} onsubmit
 */
export function form(attributes, children, onsubmit) {
  const element = /** @type {HTMLFormElement} */ (h('form', { ...attributes, novalidate: true }, ...children));
  element.addEventListener('submit', (event) => {
    event.preventDefault();
    const submit = element.querySelector('button[type="submit"]') ?? element;
    void busy(submit, () => onsubmit(element));
  });
  // Enter in a textarea is a new line: Ctrl+Enter (⌘+Enter) sends the form from there too.
  element.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      element.requestSubmit();
    }
  });
  return element;
}

/**
 * Marks a control invalid, says why, and puts the focus on it.
 *
 * @param {HTMLElement} control
 * @param {string} text
 */
export function invalid(control, text) {
  messages.error(text);
  control.setAttribute('aria-invalid', 'true');
  control.addEventListener('input', () => control.removeAttribute('aria-invalid'), { once: true });
  control.focus();
}
